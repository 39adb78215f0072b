package editormcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
)

// luaEditor is an Editor whose queries are LuaQueries over a fake Exec.
type luaEditor struct {
	*fakeEditor
	lq *LuaQueries
}

// InWorkspace resolves nothing: the bench's paths are all in it.
func (e *luaEditor) InWorkspace(_ context.Context, paths []string) []bool {
	out := make([]bool, len(paths))
	for i, p := range paths {
		out[i] = strings.HasPrefix(p, "/home/user/project/")
	}
	return out
}

func (e *luaEditor) Diagnostics(ctx context.Context, q DiagnosticsQuery) (DiagnosticFiles, error) {
	return e.lq.Diagnostics(ctx, q)
}

// diagnosticsAnswer is lua/acp/mcp/diagnostics.lua's answer for n
// diagnostics in files of 20.
func diagnosticsAnswer(n int) DiagnosticFiles {
	var ds []testDiag
	for i := 0; i < n; i++ {
		ds = append(ds, testDiag{Path: fmt.Sprintf("/home/user/project/pkg/file%02d.go", i/20), Line: i%20*2 + 1, Col: 5,
			Severity: 1 + i%4, Message: fmt.Sprintf("declared and not used: x%d", i), Source: "compiler", Code: "UnusedVar"})
	}
	return neovimFiles(ds, DiagnosticsQuery{Root: "/home/user/project", Limit: n})
}

// BenchmarkDiagnosticsTool is the host's share of the diagnostics tool on
// 1,000 diagnostics: Neovim's answer (its text) checked, the files in the
// workspace kept, the result marshaled as the server sends it.
func BenchmarkDiagnosticsTool(b *testing.B) {
	answer := diagnosticsAnswer(1000)
	lq := &LuaQueries{Exec: func(_ context.Context, _ string, result any, _ ...any) error {
		*(result.(*DiagnosticFiles)) = answer
		return nil
	}}
	t := &tools{ed: &luaEditor{fakeEditor: newFake(nil), lq: lq}, root: "/home/user/project"}
	h := textResults(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		res, _, err := t.diagnostics(ctx, nil, DiagnosticsArgs{Limit: 2000})
		return res, err
	})
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolDiagnostics}}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for i := 0; i < b.N; i++ {
		res, err := h(context.Background(), "tools/call", req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := json.Marshal(res)
		if err != nil || !strings.Contains(string(out), "file49.go:39:5: hint: declared and not used: x999 [compiler UnusedVar]") {
			b.Fatalf("%v: %.300s", err, out)
		}
	}
}

// BenchmarkReadFileResult is read_file's result for a 10,000-line (660 KB)
// text marshaled as the server sends it, against the SDK's own marshaling.
func BenchmarkReadFileResult(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "\tlog.Printf(\"line %05d: the quick brown fox\\n\", x) // jumps over the lazy\n", i)
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: sb.String()}}}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolReadFile}}
	for _, tc := range []struct {
		name string
		mw   func(mcp.MethodHandler) mcp.MethodHandler
	}{
		{"textResult", textResults},
		{"sdk", func(h mcp.MethodHandler) mcp.MethodHandler { return h }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := tc.mw(func(context.Context, string, mcp.Request) (mcp.Result, error) { return res, nil })
			b.SetBytes(int64(sb.Len()))
			defer cpuPerOp(b)()
			for i := 0; i < b.N; i++ {
				r, _ := h(context.Background(), "tools/call", req)
				if _, err := json.Marshal(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// cpuPerOp reports the process's CPU time per op ("cpu-ns/op"), which a
// loaded machine inflates less than the wall time; call the returned
// function when the loop is done.
func cpuPerOp(b *testing.B) func() {
	c0, err := cputime.Process(0)
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		c1, err := cputime.Process(0)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}
