package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHostBuiltOnFirstUse(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go not on PATH")
	}
	e := startEditor(t)
	bin := filepath.Join(t.TempDir(), "bin", "nvim-acp")
	e.Lua(`vim.env.NVIM_ACP_BIN = ...`, nil, bin)
	e.Lua(`_G.NOTES = {}
		local orig = vim.notify
		vim.notify = function(msg, ...) table.insert(NOTES, msg); return orig(msg, ...) end
		require("acp").setup({})`, nil)
	if st := e.Chat("demo"); st.State != "starting" {
		t.Fatalf("chat() while building: %+v (must not block)", st)
	}
	e.Eventually("host built and session ready", 180*time.Second, func() bool { return e.Status().State == "ready" })
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("host not built at %s: %v", bin, err)
	}
	var notes []string
	e.Lua(`return NOTES`, &notes)
	if len(notes) == 0 || !strings.Contains(notes[0], "building the nvim-acp host") {
		t.Fatalf("user was not told about the build: %q", notes)
	}
	// The demo agent answers a prompt with a streamed, quoted reply.
	e.Send("hello demo")
	var st Status
	e.Eventually("demo turn", 30*time.Second, func() bool {
		st = e.Status()
		if st.State == "awaiting_permission" { // the demo asks before it writes its demo file
			e.Lua(`require("acp").respond_permission("allow_once")`, nil)
		}
		return st.State == "ready"
	})
	if st.StopReason != "end_turn" {
		t.Fatalf("stop %q", st.StopReason)
	}
	indexOrder(t, e.ChatText(), "## You", "hello demo", "Demo agent", "> hello demo", "_stop: end_turn_")
}

func TestCheckhealth(t *testing.T) {
	e := startEditor(t)
	e.Lua(`vim.cmd("checkhealth acp")`, nil)
	var text string
	e.Eventually("health report", 10*time.Second, func() bool {
		e.Lua(`return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`, &text)
		return strings.Contains(text, "nvim-acp agents")
	})
	for _, want := range []string{"OK Neovim", "host: ", "demo: bundled demo agent"} {
		if !strings.Contains(text, want) {
			t.Fatalf("health lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "ERROR") {
		t.Fatalf("health reports an error:\n%s", text)
	}
}
