package host

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"testing"

	"github.com/nvim-acp/nvim-acp/registry"
)

// luaCall matches a call of a host RPC method by name in lua/acp:
// host.request("acp_x", ...), pcall(host.notify, "acp_x", ...),
// vim.rpcnotify(chan, "acp_x", ...), pcall(vim.rpcrequest, chan, "acp_x", ...).
var luaCall = regexp.MustCompile(`(?:request|notify|rpcnotify|rpcrequest)(?:\(|,)\s*(?:[a-z_.]+,\s*)?"(acp_[a-z_]+)"`)

// luaName matches any "acp_x" string of lua/acp (method names passed on,
// as a question's answer method is).
var luaName = regexp.MustCompile(`"(acp_[a-z_]+)"`)

// luaMethodNames reads lua/acp: the names in call position, and every
// "acp_x" string.
func luaMethodNames(t *testing.T) (called, named []string) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join("..", "lua", "acp"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".lua" {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range luaCall.FindAllSubmatch(src, -1) {
			called = append(called, string(m[1]))
		}
		for _, m := range luaName.FindAllSubmatch(src, -1) {
			named = append(named, string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return called, named
}

// TestRPCMethodsPairedWithLua: every method Lua calls is registered, and
// every registered method is called from Lua (none left unused).
func TestRPCMethodsPairedWithLua(t *testing.T) {
	registered := slices.Collect(func(yield func(string) bool) {
		for name := range (&Host{}).methods() {
			yield(name)
		}
		for name := range registryMethods(&registry.Service{}) {
			yield(name)
		}
	})
	sort.Strings(registered)
	called, named := luaMethodNames(t)
	if len(called) < 10 {
		t.Fatalf("found only %v called in lua/acp: is the call pattern still host.request(\"acp_x\")?", called)
	}
	for _, name := range called {
		if !slices.Contains(registered, name) {
			t.Errorf("lua/acp calls %s, which the host does not register (host.go methods)", name)
		}
	}
	for _, name := range registered {
		if !slices.Contains(named, name) {
			t.Errorf("the host registers %s, which lua/acp never calls", name)
		}
	}
}
