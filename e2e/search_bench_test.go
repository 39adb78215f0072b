package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkHistorySearch (issue 29): :AcpHistory /text over 1,000 saved
// chats of 50 KB (50 MB) in 20 projects, the text in 1 chat of 10, in a
// headless Neovim: from the command to the first hits listed in its window
// (first-ms, the worst of b.N searches; issue 29 asks < 200 ms) and to the
// search's end (all-ms); the first search of the Neovim is timed apart
// (cold-first-ms: it also loads the Lua of the host's event path). The
// host reads the chats (package chatsearch: its BenchmarkSearch is the
// same search without Neovim).
//
//	NVIM_BIN=... go test -run '^$' -bench HistorySearch -benchtime 3x ./e2e/
func BenchmarkHistorySearch(b *testing.B) {
	e := startEditor(b)
	root := filepath.Join(e.state, "data", "nvim", "acp", "history")
	para := strings.Repeat("The agent read the parser and wrote a test for the lexer. ", 16)
	for i := range 1000 {
		dir := filepath.Join(root, fmt.Sprintf("project-%02d", i%20))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		var sb strings.Builder
		for j := 0; sb.Len() < 50<<10; j++ {
			if j%10 == 0 {
				sb.WriteString("## You\n")
			}
			sb.WriteString(para)
			if i%10 == 0 && j == 25 {
				sb.WriteString("the rare needle word here ")
			}
			sb.WriteString("\n")
		}
		id := fmt.Sprintf("chat-%04d", i)
		if err := os.WriteFile(filepath.Join(dir, id+".txt"), []byte(sb.String()), 0o600); err != nil {
			b.Fatal(err)
		}
		meta := fmt.Sprintf(`{"id":%q,"title":"chat %d","agent":"fake","project":"/p/%d","updated":%d}`, id, i, i%20, 1700000000+i)
		if err := os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(meta), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	// The host started (its start is not the search's).
	e.Lua(`require("acp.host").ensure()`, nil)
	search := func() (float64, float64) {
		var ms []float64
		e.Lua(`local t0 = vim.uv.hrtime()
			vim.cmd("AcpHistory /rare needle")
			local search = require("acp.history.search")
			vim.wait(10000, function() return search.view().hits > 0 end, 1)
			local first = (vim.uv.hrtime() - t0) / 1e6
			vim.wait(10000, function() return search.view().done end, 1)
			local v = search.view()
			assert(v.hits == 100, "hits: " .. v.hits)
			return { first, (vim.uv.hrtime() - t0) / 1e6 }`, &ms)
		return ms[0], ms[1]
	}
	// The first search of a Neovim also loads the modules of the command
	// and of the host's event path (acp.history.search, acp.session.events
	// and what they require) unless a session ran before: timed apart
	// (cold-first-ms).
	// cold-modules: how many of nvim-acp's Lua modules the first search
	// loads (a count that holds on a loaded machine).
	loaded := func() int {
		var n int
		e.Lua(`local n = 0
			for k in pairs(package.loaded) do if k:match("^acp") then n = n + 1 end end
			return n`, &n)
		return n
	}
	b.StopTimer()
	m0 := loaded()
	cold, _ := search()
	coldModules := loaded() - m0
	b.StartTimer()
	var first, all float64
	for i := 0; i < b.N; i++ {
		f, a := search()
		first, all = max(first, f), max(all, a)
	}
	b.ReportMetric(cold, "cold-first-ms")
	b.ReportMetric(float64(coldModules), "cold-modules")
	b.ReportMetric(first, "first-ms")
	b.ReportMetric(all, "all-ms")
}
