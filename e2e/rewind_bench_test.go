package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkUIRewind: a turn changed 50 files of 200 lines, 5 of them
// open (one with an unsaved line); once its end scan has recorded them,
// rewinding to before it (files only) with a UI attached: without a
// preview, from the call to every buffer showing the restored text and
// every file on disk restored; then (after a redo) through the preview,
// from its key to the same; and Neovim's longest block meanwhile (a
// second client pinging every 5 ms).
func BenchmarkUIRewind(b *testing.B) {
	var worst, keyWorst, block float64
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		u := startUIEditor(b)
		ws, _ := filepath.EvalSymlinks(u.Dir)
		var steps []any
		var paths []string
		for f := 0; f < 50; f++ {
			p := filepath.Join(ws, fmt.Sprintf("f%02d.txt", f))
			var before, after strings.Builder
			for l := 0; l < 200; l++ {
				fmt.Fprintf(&before, "line %d of file %d\n", l, f)
				if l%20 == 0 {
					fmt.Fprintf(&after, "line %d of file %d, by the agent\n", l, f)
				} else {
					fmt.Fprintf(&after, "line %d of file %d\n", l, f)
				}
			}
			fsPutFile(b, p, before.String())
			steps = append(steps, diskWrite(p, after.String()))
			paths = append(paths, p)
		}
		steps = append(steps, text("done"))
		var bufs []int
		for f := 0; f < 5; f++ {
			var bn int
			u.Lua(`local b = vim.fn.bufadd(...); vim.fn.bufload(b); vim.bo[b].buflisted = true; return b`, &bn, paths[f*10])
			bufs = append(bufs, bn)
		}
		u.Lua(`vim.api.nvim_buf_set_lines(..., 199, 199, true, { "unsaved" })`, nil, bufs[0])
		u.SetupFake(M{"turns": []any{steps}}, benchOptions())
		u.Chat("fake")
		u.WaitState("ready")
		u.runTurn("change 50 files")
		u.Eventually("the open files changed", 30*time.Second, func() bool {
			for _, bn := range bufs {
				var l string
				u.Lua(`return vim.api.nvim_buf_get_lines(..., 0, 1, true)[1]`, &l, bn)
				if !strings.HasSuffix(l, "by the agent") {
					return false
				}
			}
			return true
		})
		// The key comes after the turn: its end scan has recorded the
		// changes (the list waits for it).
		u.Eventually("the turn's changes recorded", 30*time.Second, func() bool {
			var files int
			u.Lua(`local l = require("acp.host").request("acp_rewind_list", require("acp.sessions").get().sid)
				return l.checkpoints[1] and l.checkpoints[1].files or 0`, &files)
			return files == 50
		})
		var hostPid int
		u.Lua(`return vim.fn.jobpid(require("acp.host").channel())`, &hostPid)
		n0, h0 := schedCPU(u.pid), schedCPU(hostPid)
		u.ping.measure(true)
		var ms float64
		u.Lua(`local bufs, paths = ...
			local t = vim.uv.hrtime()
			_G.bufs_ms = nil
			require("acp").rewind({ message = 1, conversation = false, confirm = false })
			_G.call_ms = (vim.uv.hrtime() - t) / 1e6
			local next_file = 1
			local function done()
				for _, b in ipairs(bufs) do
					if vim.api.nvim_buf_get_lines(b, 0, 1, true)[1]:find("by the agent") then return false end
				end
				_G.bufs_ms = _G.bufs_ms or (vim.uv.hrtime() - t) / 1e6
				-- The files restored so far are not read again (the
				-- polling would take Neovim's time from the rewind).
				while next_file <= #paths do
					local f = io.open(paths[next_file])
					local first = f and f:read("*l") or ""
					if f then f:close() end
					if first:find("by the agent") then return false end
					next_file = next_file + 1
				end
				return true
			end
			vim.wait(10000, done, 2)
			vim.cmd("redraw")
			return (vim.uv.hrtime() - t) / 1e6`, &ms, bufs, paths)
		u.ping.measure(false)
		var call, bufsMS float64
		u.Lua(`return _G.call_ms`, &call)
		u.Lua(`return _G.bufs_ms`, &bufsMS)
		n1, h1 := schedCPU(u.pid), schedCPU(hostPid)
		b.Logf("the rewind call %.1f ms (the host plans and writes in the background); every buffer shows it at %.1f ms; CPU Neovim %.1f ms, host %.1f ms",
			call, bufsMS, float64(n1-n0)/float64(time.Millisecond), float64(h1-h0)/float64(time.Millisecond))
		maxPing, _ := u.ping.figures()
		longest := float64(maxPing.Microseconds()) / 1000
		b.Logf("rewind of 50 files (5 open): %.1f ms to every buffer and file; longest Neovim block %.1f ms; load %s", ms, longest, loadavg())
		worst, block = math.Max(worst, ms), math.Max(block, longest)
		if ms > 9000 {
			b.Fatalf("not rewound: %s", u.ChatText())
		}
		var unsaved []string
		u.Lua(`return vim.api.nvim_buf_get_lines(..., 199, 201, true)`, &unsaved, bufs[0])
		if len(unsaved) != 2 || unsaved[0] != "unsaved" {
			b.Fatalf("the unsaved line lost: %q", unsaved)
		}

		// Redo, then the same rewind through the preview: the host plans
		// it in the background (the lines counted) and it opens; then the
		// key (y) rewinds: from the key to every buffer and file.
		u.Lua(`return require("acp").rewind_redo()`, nil)
		u.Eventually("redone", 30*time.Second, func() bool {
			var n int
			u.Lua(`local bufs, paths = ...
				local n = 0
				for _, b in ipairs(bufs) do
					if vim.api.nvim_buf_get_lines(b, 0, 1, true)[1]:find("by the agent") then n = n + 1 end
				end
				for _, p in ipairs(paths) do
					local f = io.open(p)
					if f and (f:read("*l") or ""):find("by the agent") then n = n + 1 end
					if f then f:close() end
				end
				return n`, &n, bufs, paths)
			return n == len(bufs)+len(paths)
		})
		u.ping.measure(true)
		var preview float64
		u.Lua(`local t = vim.uv.hrtime()
			_G.preview_ms = nil
			local function open()
				for _, w in ipairs(vim.api.nvim_list_wins()) do
					if vim.b[vim.api.nvim_win_get_buf(w)].acp_role == "rewind" then
						return true
					end
				end
			end
			local timer = vim.uv.new_timer()
			timer:start(1, 1, vim.schedule_wrap(function()
				if not _G.preview_ms and open() then
					_G.preview_ms = (vim.uv.hrtime() - t) / 1e6
					timer:stop()
					timer:close()
				end
			end))
			require("acp").rewind({ message = 1, conversation = false })`, nil)
		u.Eventually("the preview open", 30*time.Second, func() bool {
			u.Lua(`return _G.preview_ms or -1`, &preview)
			return preview >= 0
		})
		u.ping.measure(false)
		previewBlock, _ := u.ping.figures()
		u.Lua(`local bufs, paths = ...
			_G.key_t, _G.key_ms = nil, nil
			local ns
			ns = vim.on_key(function(_, typed)
				-- (the key mapped to a function is not "y": what was typed is)
				if typed == "y" and not _G.key_t then
					_G.key_t = vim.uv.hrtime()
				end
			end)
			local next_file = 1
			local timer = vim.uv.new_timer()
			timer:start(2, 2, vim.schedule_wrap(function()
				if not _G.key_t or _G.key_ms then
					return
				end
				for _, b in ipairs(bufs) do
					if vim.api.nvim_buf_get_lines(b, 0, 1, true)[1]:find("by the agent") then return end
				end
				while next_file <= #paths do
					local f = io.open(paths[next_file])
					local first = f and f:read("*l") or ""
					if f then f:close() end
					if first:find("by the agent") then return end
					next_file = next_file + 1
				end
				vim.cmd("redraw")
				_G.key_ms = (vim.uv.hrtime() - _G.key_t) / 1e6
				timer:stop()
				timer:close()
				vim.on_key(nil, ns)
			end))`, nil, bufs, paths)
		u.ping.measure(true)
		u.nv.Input("y")
		var keyMS float64
		u.Eventually("rewound by the key", 30*time.Second, func() bool {
			u.Lua(`return _G.key_ms or -1`, &keyMS)
			return keyMS >= 0
		})
		u.ping.measure(false)
		keyBlock, _ := u.ping.figures()
		b.Logf("through the preview: opening it %.1f ms (longest block %.1f ms); from the key to every buffer and file %.1f ms (longest block %.1f ms)",
			preview, float64(previewBlock.Microseconds())/1000, keyMS, float64(keyBlock.Microseconds())/1000)
		keyWorst = math.Max(keyWorst, keyMS)
		block = math.Max(block, math.Max(float64(previewBlock.Microseconds())/1000, float64(keyBlock.Microseconds())/1000))
	}
	b.ReportMetric(worst, "rewind-ms")
	b.ReportMetric(keyWorst, "key-ms")
	b.ReportMetric(block, "block-ms")
}

// schedCPU is the CPU time of every thread of process pid so far, to the
// nanosecond (/proc/<pid>/task/*/schedstat; /proc/<pid>/stat counts
// 10 ms ticks).
func schedCPU(pid int) time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}
