package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/registry"
)

// recordRegistryEvents makes the editor keep the registry events the host
// sends (as well as routing them to acp.agents.registry).
func recordRegistryEvents(e *Editor) {
	e.Lua(`_G.registry_events = {}
local router = require("acp.session.events")
local dispatch = router.dispatch
router.dispatch = function(events)
  for _, ev in ipairs(events) do
    if type(ev.type) == "string" and ev.type:match("^registry_") then
      table.insert(_G.registry_events, ev)
    end
  end
  return dispatch(events)
end`, nil)
}

// waitRegistryEvent polls the recorded events for type typ with key == id.
func waitRegistryEvent(e *Editor, typ, key string, id int) map[string]any {
	e.t.Helper()
	var found map[string]any
	e.Eventually(typ, 30*time.Second, func() bool {
		var evs []map[string]any
		e.Lua(`return _G.registry_events`, &evs)
		for _, ev := range evs {
			if ev["type"] == typ && fmt.Sprint(ev[key]) == fmt.Sprint(id) {
				found = ev
				return true
			}
		}
		return false
	})
	return found
}

// The registry through a real Neovim and host: list (bundled, dirs from
// stdpath), refresh from a local server, install a binary agent whose
// archive holds a real ACP agent (the fake agent), then chat with it using
// the spec the install returned.
func TestRegistryInstallThenChat(t *testing.T) {
	plat := registry.Platform(runtime.GOOS, runtime.GOARCH)
	e := startEditor(t)
	recordRegistryEvents(e)
	url := fakeRegistry(t, e, "hello from an installed agent")
	opts := M{"url": url}

	// Nothing fetched yet: the bundled snapshot, cached under stdpath dirs.
	var list map[string]any
	e.Lua(`return require("acp.host").request("acp_registry_list", {})`, &list)
	if list["origin"] != "bundled" || len(list["agents"].([]any)) != 11 || list["platform"] != plat {
		t.Fatalf("first list: origin %v platform %v, %d agents", list["origin"], list["platform"], len(list["agents"].([]any)))
	}

	var req int
	e.Lua(`return require("acp.host").request("acp_registry_refresh", ...)`, &req, opts)
	ev := waitRegistryEvent(e, "registry_list", "request", req)
	if ev["origin"] != "network" || len(ev["agents"].([]any)) != 1 {
		t.Fatalf("refresh: %v", ev)
	}
	if _, err := os.Stat(filepath.Join(e.state, "cache", "nvim", "acp", "registry", "registry.json")); err != nil {
		t.Fatalf("registry not cached under stdpath('cache'): %v", err)
	}

	var install int
	e.Lua(`return require("acp.host").request("acp_registry_install", "fake-acp", ...)`, &install, opts)
	done := waitRegistryEvent(e, "registry_installed", "install", install)
	if done["ok"] != true {
		t.Fatalf("install: %v", done)
	}
	agent := done["agent"].(map[string]any)
	cmd := agent["cmd"].([]any)
	want := filepath.Join(e.state, "data", "nvim", "acp", "agents", "fake-acp", "1.0.0", "fake-acp", "bin", "fake-acp")
	if len(cmd) != 1 || cmd[0] != want || agent["name"] != "fake-acp" {
		t.Fatalf("installed spec %v, want cmd %s", agent, want)
	}
	var progress []map[string]any
	e.Lua(`return vim.tbl_filter(function(ev) return ev.type == "registry_progress" end, _G.registry_events)`, &progress)
	if len(progress) == 0 || progress[0]["phase"] != "download" || progress[len(progress)-1]["phase"] != "done" {
		t.Fatalf("progress events %v", progress)
	}

	var resolved map[string]any
	e.Lua(`return require("acp.host").request("acp_registry_resolve", "fake-acp", ...)`, &resolved, opts)
	if fmt.Sprint(resolved["cmd"]) != fmt.Sprint(cmd) || resolved["installed"] != true {
		t.Fatalf("resolve: %v", resolved)
	}

	// The spec starts the agent: a whole turn with it.
	e.Lua(`require("acp").setup({agents = {["fake-acp"] = {cmd = (...).cmd, env = (...).env}}, default_agent = "fake-acp",
		permissions = {focus_guard_ms = 0}})`, nil, agent)
	e.Chat("fake-acp")
	e.WaitState("ready")
	e.Send("hi")
	if st := e.WaitState("ready"); st.StopReason != "end_turn" {
		t.Fatalf("turn: %+v", st)
	}
	if txt := e.ChatText(); !strings.Contains(txt, "hello from an installed agent") {
		t.Fatalf("chat:\n%s", txt)
	}
}
