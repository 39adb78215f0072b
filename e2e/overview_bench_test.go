package e2e

import "testing"

// BenchmarkOverview (issue 29): the :AcpSessions overview with 20 live
// sessions and 1,000 saved chats of this project: how long it takes to
// open, and to reflect one session's state change (User AcpState to its
// line drawn again), in a headless Neovim. The live sessions are the
// overview's view of a session (tables), not running agents: what is
// measured is the overview's own cost.
//
//	NVIM_BIN=... go test -run '^$' -bench Overview -benchtime 3x ./e2e/
func BenchmarkOverview(b *testing.B) {
	e := startEditor(b)
	e.Lua(`
		local files = require("acp.files")
		local history = require("acp.history")
		local sessions = require("acp.sessions")
		local project = history.project()
		vim.fn.mkdir(history.dir(project), "p")
		for i = 1, 1000 do
			local id = ("bench-%04d"):format(i)
			files.write(("%s/%s.meta.json"):format(history.dir(project), id), vim.json.encode({
				version = 1, id = id, project = project, agent = "fake", title = "saved chat " .. i,
				updated = os.time() - i, saved_ms = (os.time() - i) * 1000,
			}))
		end
		_G.bench_live = {}
		for i = 1, 20 do
			local s = { key = sessions.next_key(), agent = "fake", state = "busy", since = vim.uv.now(),
				cwd = vim.fn.getcwd(), tool_changes = {}, prompts = { items = {} }, queue = {} }
			function s.name() return "live session " .. i end
			function s.label() return "Fake" end
			function s.alive() return true end
			sessions.add(s, true)
			_G.bench_live[i] = s
		end`, nil)
	var openMs, changeMs float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var ms []float64
		e.Lua(`
			local ov = require("acp.overview")
			ov.close()
			local t0 = vim.uv.hrtime()
			require("acp").overview()
			local open = (vim.uv.hrtime() - t0) / 1e6
			local s = _G.bench_live[7]
			local worst = 0
			for j = 1, 50 do
				s.state = j % 2 == 0 and "busy" or "ready"
				s.stop_reason = "end_turn"
				t0 = vim.uv.hrtime()
				vim.api.nvim_exec_autocmds("User", { pattern = "AcpState", data = { key = s.key, state = s.state } })
				worst = math.max(worst, (vim.uv.hrtime() - t0) / 1e6)
			end
			return { open, worst }`, &ms)
		openMs = max(openMs, ms[0])
		changeMs = max(changeMs, ms[1])
	}
	b.ReportMetric(openMs, "open-ms")
	b.ReportMetric(changeMs, "change-ms")
}
