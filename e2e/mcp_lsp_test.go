package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gopls is the language server the LSP tools are tested against
// (scripts/install-tools installs it into ~/.cache/nvim-acp/tools/bin).
func gopls(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".cache", "nvim-acp", "tools", "bin", "gopls")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("gopls, the language server the LSP tools are tested with, is neither on PATH nor at %s: run scripts/install-tools (make test does)", p)
	}
	return p
}

// goWorkspace is a Go module whose b.go calls a.go's Hello, with a
// user config that starts gopls for Go buffers (as a user's would).
func goWorkspace(t *testing.T, e *Editor, ws string) {
	t.Helper()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\n// Hello greets the world.\nfunc Hello() string {\n\treturn \"hello\"\n}\n\ntype Greeter struct{ Name string }\n\nfunc (g Greeter) Greet() string { return Hello() + \" \" + g.Name }\n",
		"b.go":   "package m\n\nfunc useIt() string {\n\treturn Hello()\n}\n",
	}
	for name, text := range files {
		fsPutFile(t, filepath.Join(ws, name), text)
	}
	// gopls and the go command it runs cache, and count their telemetry
	// (in the config directory, go/telemetry), outside the test's
	// directories: they may still write there as Neovim exits.
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(os.TempDir(), "nvim-acp-e2e-gopls-cache")
	e.Lua(`local bin, root, gocache, cache = ...
		vim.api.nvim_create_autocmd("FileType", { pattern = "go", callback = function(ev)
			vim.lsp.start({ name = "gopls", cmd = { bin }, root_dir = root,
				cmd_env = { GOPROXY = "off", GOFLAGS = "-mod=mod", GOCACHE = gocache, XDG_CACHE_HOME = cache,
					XDG_CONFIG_HOME = cache .. "/config" } }, { bufnr = ev.buf })
		end })`, nil, gopls(t), ws, strings.TrimSpace(string(gocache)), cache)
}

func TestMCPLanguageServerTools(t *testing.T) {
	e, ws := fsEditor(t)
	goWorkspace(t, e, ws)
	// a.go is open; b.go is not: the tools load it, and the user's config
	// attaches gopls to it.
	e.Lua(`vim.cmd.edit(...)`, nil, filepath.Join(ws, "a.go"))
	cs := e.mcpClient(M{}, nil)
	tests := []struct {
		tool string
		args M
		want []string // lines the answer has
	}{
		{"symbols", M{"path": "a.go"}, []string{"Function Hello  a.go:4:6", "Struct Greeter  a.go:8:6", "Field Name  a.go:8:22  (in Greeter)", "Method (Greeter).Greet  a.go:10:18"}},
		{"definition", M{"path": "b.go", "line": 4, "symbol": "Hello"}, []string{"a.go:4:6: func Hello() string {"}},
		{"references", M{"path": "a.go", "line": 4, "symbol": "Hello"}, []string{"a.go:4:6: func Hello() string {", "a.go:10:42: func (g Greeter) Greet() string { return Hello() + \" \" + g.Name }", "b.go:4:9: return Hello()"}},
		{"hover", M{"path": "b.go", "line": 4, "column": 9}, []string{"func Hello() string", "Hello greets the world."}},
		{"symbols", M{"query": "Greet"}, []string{"Greeter  a.go:8:6"}},
	}
	for _, tc := range tests {
		got, isErr := callTool(t, cs, tc.tool, tc.args)
		for _, w := range tc.want {
			if isErr || !strings.Contains(got, w) {
				t.Fatalf("%s %v = %q (error %v), want %q in it", tc.tool, tc.args, got, isErr, w)
			}
		}
	}
	// b.go was loaded for the query: hidden, unlisted, gopls attached.
	var state struct {
		Listed  bool `msgpack:"listed"`
		Clients int  `msgpack:"clients"`
	}
	e.Lua(`local b = vim.fn.bufnr(...)
		return { listed = vim.bo[b].buflisted, clients = #vim.lsp.get_clients({ bufnr = b }) }`, &state, filepath.Join(ws, "b.go"))
	if state.Listed || state.Clients != 1 {
		t.Fatalf("b.go's buffer: %+v, want unlisted with gopls attached", state)
	}
	// An unsaved edit's error, as gopls reports it to Neovim.
	e.Lua(`local b = vim.fn.bufnr(...); vim.api.nvim_buf_set_lines(b, 3, 3, true, { "\tx := 1" })`, nil, filepath.Join(ws, "b.go"))
	var diag string
	e.Eventually("gopls's diagnostic of the unsaved edit", 30*time.Second, func() bool {
		diag, _ = callTool(t, cs, "diagnostics", M{"path": "b.go"})
		return strings.Contains(diag, "b.go:4:2: error: declared and not used: x")
	})
	if d, _ := callTool(t, cs, "diagnostics", M{"severity": "error"}); d != diag {
		t.Fatalf("workspace errors = %q, want b.go's only: %q", d, diag)
	}
	// A symbol not on the line, a line past the end: clear errors.
	for _, tc := range []struct {
		args M
		want string
	}{
		{M{"path": "b.go", "line": 1, "symbol": "Hello"}, `"Hello" is not on line 1 of ` + filepath.Join(ws, "b.go")},
		{M{"path": "b.go", "line": 99, "column": 1}, "line 99 is past the end of " + filepath.Join(ws, "b.go")},
	} {
		if got, isErr := callTool(t, cs, "definition", tc.args); !isErr || !strings.Contains(got, tc.want) {
			t.Fatalf("definition %v = %q (error %v), want %q", tc.args, got, isErr, tc.want)
		}
	}
}

// A file no language server takes: the tool says so after a bounded wait.
func TestMCPLanguageServerToolsWithoutOne(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "notes.txt"), "hello\n")
	e.Lua(`require("acp.mcp.queries").attach_ms = 300`, nil)
	cs := e.mcpClient(M{}, nil)
	got, isErr := callTool(t, cs, "hover", M{"path": "notes.txt", "line": 1, "symbol": "hello"})
	if !isErr || !strings.Contains(got, "no language server is attached to "+filepath.Join(ws, "notes.txt")+" (nvim-acp waited 300 ms") {
		t.Fatalf("hover without a language server = %q (error %v)", got, isErr)
	}
	if got, isErr := callTool(t, cs, "symbols", M{"query": "x"}); !isErr || !strings.Contains(got, "no language server of the workspace is running") {
		t.Fatalf("workspace symbols without a language server = %q (error %v)", got, isErr)
	}
}

// @symbol:Name adds the symbol's definition from the language server, and
// completes symbol names.
func TestMentionSymbol(t *testing.T) {
	e, ws := fsEditor(t)
	goWorkspace(t, e, ws)
	e.Lua(`vim.cmd.edit(...)`, nil, filepath.Join(ws, "b.go"))
	cs := e.mcpClient(M{"turns": []any{[]any{text("ok")}}}, nil)
	// Once gopls has loaded the workspace (the tool waits for it).
	if got, isErr := callTool(t, cs, "symbols", M{"query": "Hello"}); isErr || !strings.Contains(got, "Hello") {
		t.Fatalf("symbols = %q (error %v)", got, isErr)
	}
	e.runTurn("what does @symbol:Hello do?")
	got := promptTexts(e)["@symbol:Hello:"]
	if !strings.Contains(got, "```go a.go:") || !strings.Contains(got, "func Hello() string {\n\treturn \"hello\"\n}\n```") {
		t.Fatalf("@symbol:Hello block = %q", got)
	}
	var words []string
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.api.nvim_buf_set_lines(0, 0, -1, false, { "@symbol:Gree" })
		vim.api.nvim_win_set_cursor(0, { 1, 12 })
		local complete = require("acp.input.complete")
		complete.omnifunc(1, "")
		local out = {}
		for _, it in ipairs(complete.omnifunc(0, "symbol:Gree")) do out[#out + 1] = it.word end
		return out`, &words)
	if !slices.Contains(words, "symbol:Greeter") {
		t.Fatalf("completion of @symbol:Gree = %v", words)
	}
}
