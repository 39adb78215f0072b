package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/registry"
	"github.com/nvim-acp/nvim-acp/registry/registrytest"
)

// registryFixture is a host with no Neovim, and a local server serving a
// registry.json with one binary agent ("test-agent", this platform) and one
// npx agent, and the agent's archive.
type registryFixture struct {
	h    *Host
	r    *registry.Service
	srv  *httptest.Server
	opts map[string]any

	mu      sync.Mutex
	archive []byte
	sha     string
	hold    chan struct{} // when set, the archive handler sends half and waits on it
	version string        // of test-agent
	cc      string        // Cache-Control of registry.json
}

func newRegistryFixture(t *testing.T) *registryFixture {
	t.Helper()
	if registry.Platform(runtime.GOOS, runtime.GOARCH) == "" || runtime.GOOS == "windows" {
		t.Skip("needs a registry platform and sh")
	}
	f := &registryFixture{h: New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil), version: "1.2.3"}
	f.r = f.h.registryService()
	f.archive = registrytest.TarGz(t, registrytest.Agent())
	s := sha256.Sum256(f.archive)
	f.sha = hex.EncodeToString(s[:])
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		archive, sha, hold, version, cc := f.archive, f.sha, f.hold, f.version, f.cc
		f.mu.Unlock()
		switch r.URL.Path {
		case "/registry.json":
			if cc != "" {
				w.Header().Set("Cache-Control", cc)
			}
			plat := registry.Platform(runtime.GOOS, runtime.GOARCH)
			fmt.Fprintf(w, `{"version":"1.0.0","extensions":[],"agents":[
			  {"id":"test-agent","name":"Test Agent","version":%q,"description":"served by the test",
			   "license":"MIT","authors":["Tests"],
			   "distribution":{"binary":{%q:{"archive":%q,"sha256":%q,"cmd":"./test-agent","args":["acp"],"env":{"T":"1"}}}}},
			  {"id":"npx-agent","name":"Npx Agent","version":"0.1.0","description":"an npm package",
			   "distribution":{"npx":{"package":"npx-agent@0.1.0","args":["--acp"]}}}]}`,
				version, plat, f.srv.URL+"/releases/v1.2.3/test-agent.tar.gz", sha)
		case "/releases/v1.2.3/test-agent.tar.gz":
			w.Header().Set("Content-Length", fmt.Sprint(len(archive)))
			if hold != nil {
				w.Write(archive[:len(archive)/2])
				w.(http.Flusher).Flush()
				select {
				case <-hold:
				case <-r.Context().Done():
				}
				return
			}
			w.Write(archive)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	f.opts = map[string]any{
		"url":        f.srv.URL + "/registry.json",
		"cache_dir":  filepath.Join(t.TempDir(), "cache"),
		"data_dir":   filepath.Join(t.TempDir(), "data"),
		"timeout_ms": int64(5000),
	}
	return f
}

// events returns the UI events queued so far (no Neovim drains them).
func (f *registryFixture) events() []Event {
	f.h.ui.mu.Lock()
	defer f.h.ui.mu.Unlock()
	return append([]Event(nil), f.h.ui.events...)
}

// waitEvent polls the queued events until one satisfies match.
func (f *registryFixture) waitEvent(t *testing.T, match func(Event) bool) Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, ev := range f.events() {
			if match(ev) {
				return ev
			}
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	t.Fatalf("no matching event among %v", f.events())
	return nil
}

func typed(typ string, key string, id int) func(Event) bool {
	return func(ev Event) bool { return ev["type"] == typ && ev[key] == id }
}

func agentEntry(t *testing.T, list map[string]any, id string) map[string]any {
	t.Helper()
	for _, a := range list["agents"].([]any) {
		if e := a.(map[string]any); e["id"] == id {
			return e
		}
	}
	t.Fatalf("no %s in %v", id, list)
	return nil
}

// Before any fetch, list is the bundled snapshot; refresh fetches the
// served registry, after which list shows it from the cache.
func TestRegistryRPCListAndRefresh(t *testing.T) {
	f := newRegistryFixture(t)
	list, err := f.r.List(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	if list["origin"] != registry.OriginBundled || list["stale"] != true || len(list["agents"].([]any)) != 11 {
		t.Fatalf("first list: origin %v stale %v, %d agents", list["origin"], list["stale"], len(list["agents"].([]any)))
	}
	gemini := agentEntry(t, list, "gemini")
	if !reflect.DeepEqual(gemini["kinds"], []string{"npx"}) || gemini["installed"] != nil || gemini["version"] != "0.27.3" {
		t.Fatalf("gemini entry %v", gemini)
	}

	req, err := f.r.Refresh(f.opts)
	if err != nil {
		t.Fatal(err)
	}
	ev := f.waitEvent(t, typed("registry_list", "request", req))
	if ev["origin"] != registry.OriginNetwork || ev["error"] != nil || len(ev["agents"].([]any)) != 2 {
		t.Fatalf("refresh event %v", ev)
	}
	e := agentEntry(t, ev, "test-agent")
	if e["name"] != "Test Agent" || e["license"] != "MIT" || !reflect.DeepEqual(e["usable"], []string{"binary"}) || e["outdated"] != false {
		t.Fatalf("test-agent entry %v", e)
	}

	list, err = f.r.List(f.opts)
	if err != nil || list["origin"] != registry.OriginCache || list["stale"] != false || len(list["agents"].([]any)) != 2 {
		t.Fatalf("list after refresh: %v, %v", list, err)
	}
}

// Install end to end over RPC: progress events, the spec in the final
// event runs the agent, and list and resolve show it installed.
func TestRegistryRPCInstall(t *testing.T) {
	f := newRegistryFixture(t)
	req, _ := f.r.Refresh(f.opts)
	f.waitEvent(t, typed("registry_list", "request", req))

	id, err := f.r.Install("test-agent", f.opts)
	if err != nil {
		t.Fatal(err)
	}
	done := f.waitEvent(t, typed("registry_installed", "install", id))
	if done["ok"] != true || done["id"] != "test-agent" {
		t.Fatalf("installed event %v", done)
	}
	spec := done["agent"].(map[string]any)
	cmd := spec["cmd"].([]string)
	if spec["name"] != "test-agent" || spec["kind"] != "binary" || spec["installed"] != true || !reflect.DeepEqual(spec["env"], map[string]string{"T": "1"}) ||
		len(cmd) != 2 || cmd[1] != "acp" || !strings.HasPrefix(cmd[0], filepath.Join(f.opts["data_dir"].(string), "agents", "test-agent", "1.2.3")) {
		t.Fatalf("spec %v", spec)
	}
	if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil || string(out) != "hello from agent acp\n" {
		t.Fatalf("agent ran: %q, %v", out, err)
	}
	var phases []string
	for _, ev := range f.events() {
		if ev["type"] == "registry_progress" && ev["install"] == id {
			if len(phases) == 0 || phases[len(phases)-1] != ev["phase"] {
				phases = append(phases, ev["phase"].(string))
			}
			if ev["phase"] == "download" && ev["total"] != int64(len(f.archive)) {
				t.Fatalf("progress %v", ev)
			}
		}
	}
	if phases[0] != "download" || phases[len(phases)-1] != "done" {
		t.Fatalf("progress phases %v", phases)
	}
	// Registry events are sid-less and of the registry's own types, which
	// the session router's list (eventTypes) does not claim.
	for _, ev := range f.events() {
		if _, ok := ev["sid"]; ok || !slices.Contains(registryEventTypes, ev["type"].(string)) || slices.Contains(eventTypes, ev["type"].(string)) {
			t.Fatalf("event %v", ev)
		}
	}

	list, _ := f.r.List(f.opts)
	e := agentEntry(t, list, "test-agent")
	if inst, _ := e["installed"].(map[string]any); inst == nil || inst["version"] != "1.2.3" || !reflect.DeepEqual(e["versions"], []string{"1.2.3"}) {
		t.Fatalf("listed %v", e)
	}
	got, err := f.r.Resolve("test-agent", f.opts)
	if err != nil || !reflect.DeepEqual(got["cmd"], cmd) {
		t.Fatalf("resolve = %v, %v", got, err)
	}
	if _, err := f.r.Resolve("no-such-agent", f.opts); err == nil || !strings.Contains(err.Error(), "none installed") {
		t.Fatalf("resolve unknown: %v", err)
	}
	if _, err := f.r.Install("no-such-agent", f.opts); err == nil {
		t.Fatal("install of an unknown agent succeeded")
	}
}

// Install takes the registry as it is now, not the stale copy list showed:
// the server (Cache-Control: no-cache) moved to 1.2.4 since the refresh.
func TestRegistryRPCInstallRevalidates(t *testing.T) {
	f := newRegistryFixture(t)
	f.cc = "no-cache"
	req, _ := f.r.Refresh(f.opts)
	f.waitEvent(t, typed("registry_list", "request", req))
	f.mu.Lock()
	f.version = "1.2.4"
	f.mu.Unlock()
	id, err := f.r.Install("test-agent", f.opts)
	if err != nil {
		t.Fatal(err)
	}
	done := f.waitEvent(t, typed("registry_installed", "install", id))
	if done["ok"] != true || done["agent"].(map[string]any)["version"] != "1.2.4" {
		t.Fatalf("event %v", done)
	}
}

// A tampered archive (sha256 differs) ends with ok = false and a reason.
func TestRegistryRPCInstallChecksumMismatch(t *testing.T) {
	f := newRegistryFixture(t)
	req, _ := f.r.Refresh(f.opts)
	f.waitEvent(t, typed("registry_list", "request", req))
	f.mu.Lock()
	f.archive = registrytest.TarGz(t, []registrytest.Entry{{Name: "test-agent", Body: "#!/bin/sh\necho evil\n", Mode: 0o755}})
	f.mu.Unlock()
	id, err := f.r.Install("test-agent", f.opts)
	if err != nil {
		t.Fatal(err)
	}
	done := f.waitEvent(t, typed("registry_installed", "install", id))
	if done["ok"] != false || !strings.Contains(done["error"].(string), "checksum mismatch") {
		t.Fatalf("event %v", done)
	}
	if _, err := f.r.Resolve("test-agent", f.opts); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Fatalf("resolve: %v", err)
	}
}

// Cancel stops a running install; a second install of the same agent
// while one runs is refused.
func TestRegistryRPCInstallCancel(t *testing.T) {
	f := newRegistryFixture(t)
	req, _ := f.r.Refresh(f.opts)
	f.waitEvent(t, typed("registry_list", "request", req))
	hold := make(chan struct{})
	defer close(hold)
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	id, err := f.r.Install("test-agent", f.opts)
	if err != nil {
		t.Fatal(err)
	}
	f.waitEvent(t, func(ev Event) bool {
		return ev["type"] == "registry_progress" && ev["install"] == id && ev["phase"] == "download"
	})
	if _, err := f.r.Install("test-agent", f.opts); err == nil || !strings.Contains(err.Error(), "being installed already") {
		t.Fatalf("second install: %v", err)
	}
	if err := f.r.Cancel(id); err != nil {
		t.Fatal(err)
	}
	done := f.waitEvent(t, typed("registry_installed", "install", id))
	if done["ok"] != false || !strings.Contains(done["error"].(string), "canceled") {
		t.Fatalf("event %v", done)
	}
}

// With no Neovim to ask stdpath, dirs must be given.
func TestRegistryWithoutNeovim(t *testing.T) {
	r := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil).registryService()
	if _, err := r.List(nil); err == nil || !strings.Contains(err.Error(), "no cache_dir given") {
		t.Fatalf("list without dirs: %v", err)
	}
}
