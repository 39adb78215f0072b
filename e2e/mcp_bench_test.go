package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
)

// BenchmarkMCP measures the editor's MCP server as an agent sees it, in
// one run: testdata/benchagent reads a loaded 10,000-line buffer (an
// unsaved edit on its last line) through fs/read_text_file and through the
// MCP server's read_file (via the `nvim-acp mcp` stdio child the session
// passed it, as a real agent runs it), in alternating rounds; then calls
// the diagnostics tool on a workspace with 1,000 diagnostics. Targets:
// read_file within 1.5x of fs/read_text_file; diagnostics under 5 ms of
// host and Neovim CPU per call.
//
//	NVIM_BIN=... go test -run '^$' -bench MCP -benchtime 1x ./e2e/
//
// BENCH_MCP_CASES (default all) picks read and/or diag; BENCH_ROUNDS (default
// 3) splits each case into rounds; NVIM_ACP_CPUPROFILE=FILE makes the host
// write a CPU profile.
func BenchmarkMCP(b *testing.B) {
	bins := benchBinaries(b)
	e := startEditor(b)
	ws, err := filepath.EvalSymlinks(e.Dir)
	if err != nil {
		b.Fatal(err)
	}
	f10k := filepath.Join(ws, "f10k.txt")
	writeBenchFile(b, f10k, 10000)
	// 1,000 diagnostics: 50 loaded files of 20 each.
	var diagFiles []string
	for i := 0; i < 50; i++ {
		p := filepath.Join(ws, "pkg", fmt.Sprintf("f%02d.go", i))
		fsPutFile(b, p, strings.Repeat("package pkg // some code here\n", 40))
		diagFiles = append(diagFiles, p)
	}
	out := filepath.Join(e.state, "bench.jsonl")
	e.setup(map[string]any{
		"agents": map[string]any{"bench": map[string]any{
			"cmd": []string{bins.agent},
			"env": map[string]string{"BENCH_AGENT_OUT": out},
		}},
		"default_agent": "bench",
		"permissions":   map[string]any{"focus_guard_ms": 0},
	})
	e.Lua(`local f10k, files = ...
		vim.cmd.edit(f10k)
		vim.api.nvim_buf_set_text(0, -1, 0, -1, 0, { "// unsaved" })
		local ns = vim.api.nvim_create_namespace("bench-lint")
		for _, f in ipairs(files) do
			local b = vim.fn.bufadd(f)
			vim.fn.bufload(b)
			local ds = {}
			for i = 0, 19 do
				ds[#ds + 1] = { lnum = i * 2, col = 4, severity = 1 + i % 4, message = "diagnostic " .. i .. " of " .. f, source = "bench" }
			end
			vim.diagnostic.set(ns, b, ds)
		end
		assert(#vim.diagnostic.get() == 1000)`, nil, f10k, diagFiles)
	var diagBufs []int
	e.Lua(`return vim.tbl_map(vim.fn.bufnr, ...)`, &diagBufs, diagFiles)
	e.Chat("bench")
	e.WaitState("ready")
	var version string
	e.Lua(`return vim.fn.execute("version"):match("NVIM v[^\n]*")`, &version)
	hostPid := e.hostPid()
	var nvimPid int
	e.Lua(`return vim.fn.getpid()`, &nvimPid)
	run := func(prompt string) benchRun {
		h0, err1 := cputime.Process(hostPid)
		n0, err2 := cputime.Process(nvimPid)
		e.Send(prompt)
		e.Eventually("bench turn", 10*time.Minute, func() bool { return e.Status().State != "busy" })
		h1, err3 := cputime.Process(hostPid)
		n1, err4 := cputime.Process(nvimPid)
		if err := firstErr(err1, err2, err3, err4); err != nil {
			b.Fatal(err)
		}
		if st := e.Status(); st.StopReason != "end_turn" {
			b.Fatalf("%q ended %+v (%v)", prompt, st, lastBenchResult(b, out))
		}
		return benchRun{lastBenchResult(b, out), h1 - h0, n1 - n0}
	}
	rounds := 3
	if s := os.Getenv("BENCH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	want := func(c string) bool {
		v := os.Getenv("BENCH_MCP_CASES")
		return v == "" || strings.Contains(","+v+",", ","+c+",")
	}
	var rep benchReport
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep = benchReport{}
		if want("read") {
			reads(run, &rep, f10k, rounds)
		}
		if want("diag") {
			diagnostics(e, run, &rep, rounds, diagBufs)
		}
	}
	b.StopTimer()
	fmt.Printf("\n%s, %d cores, %s, %s\n%s\n", version, runtime.NumCPU(), runtime.GOARCH, time.Now().Format("2006-01-02"), rep.String())
	b.ReportMetric(0, "ns/op")
}

// reads compares read_file through MCP with fs/read_text_file.
func reads(run func(string) benchRun, rep *benchReport, f10k string, rounds int) {
	run(fmt.Sprintf("read %s 5 1 10000", f10k))
	run(fmt.Sprintf("mcpread %s 5 1 10000", f10k))
	run(fmt.Sprintf("sdkread %s 5 1 10000", f10k))
	var fs, mc, sdk benchRuns
	per := 300 / rounds
	for r := 0; r < rounds; r++ {
		fs.add(run(fmt.Sprintf("read %s %d 1 10000", f10k, per)), 1)
		mc.add(run(fmt.Sprintf("mcpread %s %d 1 10000", f10k, per)), 1)
		sdk.add(run(fmt.Sprintf("sdkread %s %d 1 10000", f10k, per/3)), 1)
	}
	o, f, g := p50(mc.lat), p50(fs.lat), p50(sdk.lat)
	rep.line(fmt.Sprintf("read of the loaded 10,000-line buffer (660 KB), %d sequential each, alternating rounds", 300))
	rep.line(fmt.Sprintf("    latency p50: MCP read_file %s, fs/read_text_file %s = %.2fx (target <= 1.5x); through the Go SDK's client %s = %.2fx",
		ms(o), ms(f), float64(o)/float64(f), ms(g), float64(g)/float64(f)))
	rep.line(fmt.Sprintf("    CPU per request, host + Neovim: MCP %s + %s, fs %s + %s; the agent: MCP %s (the SDK's client %s), ACP %s",
		perReq(mc.clientCPU, mc.n), perReq(mc.nvimCPU, mc.n), perReq(fs.clientCPU, fs.n), perReq(fs.nvimCPU, fs.n),
		perReq(mc.agentCPU, mc.n), perReq(sdk.agentCPU, sdk.n), perReq(fs.agentCPU, fs.n)))
}

// diagnostics times the diagnostics tool on the workspace's 1,000. A turn
// has work of its own (the prompt, the chat, the workspace scanned for
// changes): a call's CPU is the difference between turns of many calls
// and turns of few, divided by the calls between them; the CPU of the
// turns of many calls, each call's share, is shown next to it. Neovim
// keeps each buffer's lines until its DiagnosticChanged: cold (the
// target's figure), every call comes right after a DiagnosticChanged of
// each of the 50 buffers (their handler runs just before the query;
// Neovim's own handlers, a statusline redraw, are not the tool's); one,
// after one buffer's; warm, nothing changed.
func diagnostics(e *Editor, run func(string) benchRun, rep *benchReport, rounds int, bufs []int) {
	const many, few = 40, 4
	modes := []string{"cold", "one", "warm"}
	var cached bool
	e.Lua(`local bufs = ...
		local ok, D = pcall(require, "acp.mcp.diagnostics")
		if not ok or not D.changed then
			return false -- before Neovim kept anything: every call is cold
		end
		_G.acp_bench_text = _G.acp_bench_text or D.text
		_G.acp_bench_in = 0 -- CPU (ns) spent in the query itself
		local function ns(r)
			return (r.utime.sec + r.stime.sec) * 1e9 + (r.utime.usec + r.stime.usec) * 1e3
		end
		_G.acp_bench_mode = function(mode)
			D.text = function(a)
				local r0 = vim.uv.getrusage()
				-- What each buffer's DiagnosticChanged does.
				if mode == "cold" then
					for _, b in ipairs(bufs) do
						D.changed(b)
					end
				elseif mode == "one" then
					D.changed(bufs[1])
				end
				local r = _G.acp_bench_text(a)
				_G.acp_bench_in = _G.acp_bench_in + ns(vim.uv.getrusage()) - ns(r0)
				return r
			end
		end
		return true`, &cached, bufs)
	if !cached {
		modes = []string{"uncached"}
	}
	rep.line(fmt.Sprintf("diagnostics tool, workspace of 1,000 diagnostics (50 buffers), all returned, %d rounds of %d and %d calls", rounds, many, few))
	for _, mode := range modes {
		if cached {
			e.Lua(`_G.acp_bench_mode(...)`, nil, mode)
		}
		run("mcpdiag 5")
		var dg, small benchRuns
		var in0, in1 int64
		if cached {
			e.Lua(`return _G.acp_bench_in`, &in0)
		}
		for r := 0; r < rounds; r++ {
			dg.add(run(fmt.Sprintf("mcpdiag %d", many)), 1)
			small.add(run(fmt.Sprintf("mcpdiag %d", few)), 1)
		}
		inQuery := ""
		if cached {
			e.Lua(`return _G.acp_bench_in`, &in1)
			inQuery = fmt.Sprintf(" of which %s in the query's Lua", us(time.Duration(in1-in0)/time.Duration(rounds*(many+few+2))))
		}
		calls := time.Duration(rounds * (many - few))
		host, nvim := (dg.clientCPU-small.clientCPU)/calls, (dg.nvimCPU-small.nvimCPU)/calls
		rep.line(fmt.Sprintf("  %s: %s", mode, map[string]string{
			"cold":     "each call right after DiagnosticChanged of the 50 buffers (all read again): the target's figure",
			"one":      "each call right after DiagnosticChanged of one buffer",
			"warm":     "nothing changed since the last call",
			"uncached": "Neovim keeps nothing",
		}[mode]))
		rep.line(fmt.Sprintf("    host + Neovim CPU per call: %s (host %s, Neovim %s%s; target < 5 ms); latency p50 %s; with the turn's own work %s (host %s, Neovim %s)",
			ms(host+nvim), us(host), us(nvim), inQuery, ms(p50(dg.lat)),
			ms((dg.clientCPU+dg.nvimCPU)/time.Duration(dg.n)), perReq(dg.clientCPU, dg.n), perReq(dg.nvimCPU, dg.n)))
	}
	if cached {
		e.Lua(`require("acp.mcp.diagnostics").text = _G.acp_bench_text`, nil)
	}
}

// perReq is d per request.
func perReq(d time.Duration, n int) string { return us(d / time.Duration(n)) }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
