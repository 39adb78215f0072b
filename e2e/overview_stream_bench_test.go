package e2e

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkUIOverviewStreaming (issue 29 item 3): "no Neovim block over
// 16 ms while sessions stream" with the overview open. A Neovim with a UI
// attached and a second client pinging every 5 ms (the longest ping is
// the longest block), 1,000 saved chats of the project, 20 live sessions
// of the fake agent (one chat on screen), then all 20 streaming a turn at
// once (busy, 600 chunks of text in bursts of 60, ready). With the
// overview (:AcpSessions) open ("overview-open") and, for comparison,
// closed ("overview-closed"). Reported: the longest block from the sends
// ending to every session done (max-block-ms; the sends' own block:
// send-block-ms), and how long after the last turn
// ends (the agents' END mark) every session shows done: in the overview's
// lines when open, in the sessions' states when closed (done-ms).
// Load aside: the most CPU Neovim's main thread ran during one ping
// (max-block-cpu-ms, from /proc/<pid>/schedstat), the pings over 16 ms
// (blocks-over-16ms) and those in which Neovim itself ran over 16 ms
// (cpu-over-16ms); the log says whether the 16 ms target is met.
//
//	NVIM_BIN=... go test -run '^$' -bench UIOverviewStreaming -benchtime 1x ./e2e/
func BenchmarkUIOverviewStreaming(b *testing.B) {
	const live, bursts, perBurst = 20, 10, 60
	line := []string{"line {i} of the answer, words to fill it\n"}
	var turn []any
	for range bursts {
		turn = append(turn, M{"chunks": perBurst, "cycle": line}, M{"sleep_ms": 40})
	}
	turn = append(turn, M{"mark": "END"})
	for _, c := range []struct {
		name string
		open bool
	}{{"overview-closed", false}, {"overview-open", true}} {
		b.Run(c.name, func(b *testing.B) {
			var block, blockCPU, overs, cpuOvers, sends, done float64
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				u := startUIEditor(b)
				u.ping.watchCPU(u.pid)
				u.Lua(`
					local files = require("acp.files")
					local history = require("acp.history")
					local project = history.project()
					vim.fn.mkdir(history.dir(project), "p")
					for i = 1, 1000 do
						local id = ("bench-%04d"):format(i)
						files.write(("%s/%s.meta.json"):format(history.dir(project), id), vim.json.encode({
							version = 1, id = id, project = project, agent = "fake", title = "saved chat " .. i,
							updated = os.time() - i, saved_ms = (os.time() - i) * 1000,
						}))
					end`, nil)
				// (history.max_sessions, 50 by default, would delete 950 of
				// the saved chats at the first save)
				u.SetupFake(M{"turns": []any{turn}}, M{"history": M{"max_sessions": 5000}})
				u.Chat("fake")
				u.WaitState("ready")
				for range live - 1 {
					u.Lua(`require("acp").new_session("fake")`, nil)
				}
				u.Eventually(fmt.Sprintf("%d sessions ready", live), 60*time.Second, func() bool {
					var n int
					u.Lua(`local n = 0
						for _, s in ipairs(require("acp.sessions").list()) do if s.state == "ready" then n = n + 1 end end
						return n`, &n)
					return n == live
				})
				if c.open {
					u.Lua(`require("acp").overview()`, nil)
					u.Eventually("the overview open", 10*time.Second, func() bool {
						var ok bool
						u.Lua(`return require("acp.overview").buf() ~= nil`, &ok)
						return ok
					})
				}
				// A 2 ms timer notes (wall clock) when every session shows
				// done: the overview's lines, or the states when closed.
				u.Lua(`local n, open = ...
					_G.all_done_us, _G.last_ready_us = nil, nil
					vim.api.nvim_create_autocmd("User", { pattern = "AcpState", callback = function(ev)
						if type(ev.data) == "table" and ev.data.state == "ready" then
							local sec, usec = vim.uv.gettimeofday()
							_G.last_ready_us = sec * 1e6 + usec
						end
					end })
					local ov = require("acp.overview")
					local sessions = require("acp.sessions")
					local function count()
						local k = 0
						if open then
							local buf = ov.buf()
							if not buf then return 0 end
							-- (the header's 2 lines, then the live sessions: reading
							-- the 1,000 saved chats' lines too would load Neovim)
							for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, n + 2, false)) do
								if l:find("%f[%w]done%f[%W]") then k = k + 1 end
							end
						else
							for _, s in ipairs(sessions.list()) do
								if s.state == "ready" and s.stop_reason then k = k + 1 end
							end
						end
						return k
					end
					local timer = vim.uv.new_timer()
					timer:start(2, 2, vim.schedule_wrap(function()
						if _G.all_done_us or not timer:is_active() then return end
						if count() == n then
							local sec, usec = vim.uv.gettimeofday()
							_G.all_done_us = sec * 1e6 + usec
							timer:stop()
							timer:close()
						end
					end))`, nil, live, c.open)
				u.ping.measure(true)
				b.StartTimer()
				u.Lua(`for _, s in ipairs(require("acp.sessions").list()) do
						require("acp").send("stream", { session = s.key })
					end`, nil)
				// (the 20 sends in one call block Neovim by themselves: the
				// streaming is measured from their end)
				u.ping.measure(false)
				sendBlock, _ := u.ping.figures()
				u.ping.measure(true)
				var doneUs float64
				u.Eventually("every session done", 120*time.Second, func() bool {
					u.Lua(`return _G.all_done_us or -1`, &doneUs)
					return doneUs >= 0
				})
				b.StopTimer()
				u.ping.measure(false)
				maxBlock, _ := u.ping.figures()
				maxCPU, longCPU, longQueued := u.ping.cpuFigures()
				over, cpuOver := u.ping.overFrames()
				var readyUs float64
				u.Lua(`return _G.last_ready_us or -1`, &readyUs)
				var last float64
				ends := 0
				for _, ev := range u.AgentEvents() {
					if ev["event"] == "mark" && ev["name"] == "END" {
						ns, _ := ev["ns"].(float64)
						last = max(last, ns/1e3)
						ends++
					}
				}
				if ends != live {
					b.Fatalf("%d turns ended, want %d", ends, live)
				}
				ms := float64(maxBlock.Microseconds()) / 1000
				b.Logf("%s: longest block %.1f ms streaming (Neovim ran %.1f ms of it and waited %.1f ms for a CPU; the most it ran in one block: %.1f ms), %.1f ms sending the 20 prompts; every session done %.1f ms after the last turn ended (the last User AcpState ready %.1f ms after it); load %s",
					c.name, ms, msOf(longCPU), msOf(longQueued), msOf(maxCPU), float64(sendBlock.Microseconds())/1000, (doneUs-last)/1e3, (readyUs-last)/1e3, loadavg())
				verdict := "met"
				if over > 0 {
					verdict = fmt.Sprintf("NOT met: %d pings over 16 ms, in %d of them Neovim itself ran over 16 ms", over, cpuOver)
				}
				b.Logf("%s: the target, no block over 16 ms: %s", c.name, verdict)
				block = max(block, ms)
				overs = max(overs, float64(over))
				cpuOvers = max(cpuOvers, float64(cpuOver))
				blockCPU = max(blockCPU, msOf(maxCPU))
				sends = max(sends, float64(sendBlock.Microseconds())/1000)
				done = max(done, (doneUs-last)/1e3)
			}
			b.ReportMetric(block, "max-block-ms")
			b.ReportMetric(blockCPU, "max-block-cpu-ms")
			b.ReportMetric(overs, "blocks-over-16ms")
			b.ReportMetric(cpuOvers, "cpu-over-16ms")
			b.ReportMetric(sends, "send-block-ms")
			b.ReportMetric(done, "done-ms")
		})
	}
}

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
