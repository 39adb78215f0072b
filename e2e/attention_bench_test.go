package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkAttention (issue 29): how long after an agent asks for a
// permission `User AcpAttention` fires, over 100 requests in 10 sessions
// of the fake agent at once (10 each, one after the other: each is
// answered from the autocmd, and the agent asks the next). The agent
// logs the wall-clock time just before it sends each request (a mark);
// the autocmd notes the wall-clock time it runs. Reported: the slowest of
// the 100 (max-ms; issue 29 asks < 500 ms) and the median (p50-ms), in a
// headless Neovim, one chat on screen, nine hidden.
//
//	NVIM_BIN=... go test -run '^$' -bench Attention -benchtime 1x ./e2e/
func BenchmarkAttention(b *testing.B) {
	const sessions, perSession = 10, 10
	var maxMs, p50Ms float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := startEditor(b)
		var steps []any
		for j := range perSession {
			steps = append(steps, M{"mark": fmt.Sprintf("r%d", j)}, permRequest(fmt.Sprintf("p%d", j), "Run ls", "execute", "ls"))
		}
		steps = append(steps, text("done"))
		e.SetupFake(M{"turns": []any{steps}}, nil)
		e.Lua(`_G.attn = {}
			vim.api.nvim_create_autocmd("User", { pattern = "AcpAttention", callback = function(ev)
				if ev.data.kind ~= "permission" then return end
				local sec, usec = vim.uv.gettimeofday()
				local s = require("acp.sessions").get(ev.data.session)
				table.insert(_G.attn, { sid = s and s.session_id or "?", us = sec * 1e6 + usec })
				local key = ev.data.session
				vim.schedule(function() require("acp").respond_permission("allow_once", { session = key }) end)
			end })`, nil)
		e.Chat("fake")
		e.WaitState("ready")
		for range sessions - 1 {
			e.Lua(`require("acp").new_session("fake")`, nil)
		}
		e.Eventually("10 sessions ready", 60*time.Second, func() bool {
			var n int
			e.Lua(`local n = 0
				for _, s in ipairs(require("acp.sessions").list()) do if s.state == "ready" then n = n + 1 end end
				return n`, &n)
			return n == sessions
		})
		b.StartTimer()
		e.Lua(`for _, s in ipairs(require("acp.sessions").list()) do require("acp").send("go", { session = s.key }) end`, nil)
		e.Eventually("100 attentions", 120*time.Second, func() bool {
			var n int
			e.Lua(`return #_G.attn`, &n)
			return n == sessions*perSession
		})
		b.StopTimer()
		var got []struct {
			Sid string  `msgpack:"sid"`
			Us  float64 `msgpack:"us"`
		}
		e.Lua(`return _G.attn`, &got)
		marks := map[string][]float64{} // per agent session, in order
		for _, ev := range e.AgentEvents() {
			if ev["event"] == "mark" {
				sid, _ := ev["session"].(string)
				ns, _ := ev["ns"].(float64)
				marks[sid] = append(marks[sid], ns/1e3)
			}
		}
		seen := map[string]int{}
		var lat []float64
		for _, g := range got {
			k := seen[g.Sid]
			seen[g.Sid]++
			if k >= len(marks[g.Sid]) {
				b.Fatalf("attention %d of %s has no request mark (%d marks)", k, g.Sid, len(marks[g.Sid]))
			}
			lat = append(lat, (g.Us-marks[g.Sid][k])/1e3)
		}
		if len(seen) != sessions {
			b.Fatalf("attentions from %d sessions: %v", len(seen), seen)
		}
		sort.Float64s(lat)
		maxMs = max(maxMs, lat[len(lat)-1])
		p50Ms = max(p50Ms, lat[len(lat)/2])
	}
	b.ReportMetric(maxMs, "max-ms")
	b.ReportMetric(p50Ms, "p50-ms")
}
