package e2e

// A long chat (issue 34 items 1-2): 2,000 turns of ~110 lines each in one
// chat (~220,000 lines), a UI attached and the pinger measuring how long
// Neovim blocks. Each turn's time is from send() to the end of the turn's
// handling in Neovim (the state back to "ready" and what runs with it, the
// chat's save included); the last turns should cost what the first did.
// Then the saved chat is reopened (:AcpHistory's "Open read-only").
//
//	NVIM_BIN=... go test -run '^$' -bench '^BenchmarkLongChat$' -benchtime 1x ./e2e/
//
// BENCH_LONGCHAT_TURNS sets the number of turns (default 2000).

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"
)

// longChatLua runs n turns, each sent once the last one's handling is
// over, and keeps each one's time in _G.turn_ms.
const longChatLua = `
local n = ...
_G.turn_ms = _G.turn_ms or {}
_G.turn_cpu = _G.turn_cpu or {}
local function cpu()
  local r = vim.uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
end
_G.turns_done = false
local acp = require("acp")
local left, t0, c0 = n, nil, nil
local function send_next()
  left = left - 1
  t0, c0 = vim.uv.hrtime(), cpu()
  acp.send("turn " .. (#_G.turn_ms + 1))
end
local au
au = vim.api.nvim_create_autocmd("User", {
  pattern = "AcpState",
  callback = function(a)
    if a.data.state ~= "ready" or not t0 then
      return
    end
    local started, cpu0 = t0, c0
    t0 = nil
    -- After what the turn's end runs (the save): scheduled behind it.
    vim.schedule(function()
      table.insert(_G.turn_ms, (vim.uv.hrtime() - started) / 1e6)
      table.insert(_G.turn_cpu, cpu() - cpu0)
      if left > 0 then
        send_next()
      else
        vim.api.nvim_del_autocmd(au)
        _G.turns_done = true
      end
    end)
  end,
})
send_next()`

// reopenLua opens the newest saved chat read-only, timing the call
// (the chat on screen) and the parse of all its lines (in steps).
const reopenLua = `
local h = require("acp.history")
if h.flush then h.flush() end
local meta = h.list()[1]
local function cpu()
  local r = vim.uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e3 + (r.utime.usec + r.stime.usec) / 1e3
end
local t, c = vim.uv.hrtime(), cpu()
local buf = h.open(meta)
vim.cmd("redraw")
local open, open_cpu = (vim.uv.hrtime() - t) / 1e6, cpu() - c
vim.wait(10000, function() return vim.b[buf].acp_history_drawn == true end, 1)
local drawn = (vim.uv.hrtime() - t) / 1e6
return { open = open, open_cpu = open_cpu, drawn = drawn, lines = vim.api.nvim_buf_line_count(buf) }`

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// BenchmarkLongChat: send -> turn end at turn 1 (the median of turns 2-11:
// turn 1 creates the saved chat) and at the last 10 turns, the longest
// block over those last turns, the chat's length, and the reopening.
func BenchmarkLongChat(b *testing.B) {
	turns := 2000
	if v, err := strconv.Atoi(os.Getenv("BENCH_LONGCHAT_TURNS")); err == nil && v > 20 {
		turns = v
	}
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		u := startUIEditor(b)
		u.SetupFake(M{"turns": []any{prefillTurn(100)}}, benchOptions())
		u.Chat("fake")
		u.WaitState("ready")
		run := func(n int) {
			u.Lua(longChatLua, nil, n)
			deadline := time.Now().Add(60 * time.Minute)
			for {
				var done bool
				u.Lua(`return _G.turns_done`, &done)
				if done {
					return
				}
				if time.Now().After(deadline) {
					b.Fatalf("the turns did not end")
				}
				time.Sleep(100 * time.Millisecond) // polling interval (a benchmark's driver)
			}
		}
		run(turns - 10)
		cpu0 := u.cpu()
		u.ping.measure(true)
		b.StartTimer()
		run(10)
		b.StopTimer()
		u.ping.measure(false)
		cpu := u.cpu() - cpu0
		maxBlock, _ := u.ping.figures()
		var ms, cpus []float64
		u.Lua(`return _G.turn_ms`, &ms)
		u.Lua(`return _G.turn_cpu`, &cpus)
		cpuFirst, cpuLast := median(cpus[1:11]), median(cpus[len(cpus)-10:])
		var lines int
		u.Lua(`return vim.api.nvim_buf_line_count(require("acp").status().chat_buf)`, &lines)
		first, last := median(ms[1:11]), median(ms[len(ms)-10:])
		var re struct {
			Open    float64 `msgpack:"open"`
			OpenCPU float64 `msgpack:"open_cpu"`
			Drawn   float64 `msgpack:"drawn"`
			Lines   int     `msgpack:"lines"`
		}
		u.Lua(reopenLua, &re)
		if re.Lines < lines*9/10 {
			b.Errorf("reopened %d lines of a chat of %d: the saved chat is not whole", re.Lines, lines)
		}
		b.Logf("%d turns, %d lines: send -> turn end turn 1 %.1f ms (turn 1 itself %.1f), last 10 %.1f ms (%.2fx, slowest %.1f); "+
			"Neovim CPU per turn %.1f ms at turn 1, %.1f at the last (%.2fx); "+
			"max block over the last 10 %v, Neovim CPU %v; reopened %d lines: on screen %.1f ms (CPU %.1f), parsed %.1f ms; load %s",
			len(ms), lines, first, ms[0], last, last/first, slices.Max(ms[len(ms)-10:]), cpuFirst, cpuLast, cpuLast/cpuFirst,
			maxBlock.Round(time.Millisecond), cpu, re.Lines, re.Open, re.OpenCPU, re.Drawn, loadavg())
		b.ReportMetric(first, "turn1-ms")
		b.ReportMetric(last, "turn2000-ms")
		b.ReportMetric(last/first, "ratio")
		b.ReportMetric(float64(maxBlock.Microseconds())/1000, "max-block-ms")
		b.ReportMetric(cpuLast/cpuFirst, "cpu-ratio")
		b.ReportMetric(re.Open, "reopen-ms")
		b.ReportMetric(re.OpenCPU, "reopen-cpu-ms")
		b.ReportMetric(re.Drawn, "reopen-parsed-ms")
		b.ReportMetric(float64(lines), "lines")
	}
}
