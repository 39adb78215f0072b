package e2e

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkV2ContentChunksEndToEnd measures a v2 turn whose one tool call
// gets its content in tool_call_content_chunk updates (1,000 and 10,000),
// from the prompt until the turn ended in a real Neovim with every chunk
// in the tool call's content (testdata/sdkagent's "chunks N").
func BenchmarkV2ContentChunksEndToEnd(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			e := startEditor(b)
			e.setupSDKAgentV2()
			e.Chat("sdk")
			e.WaitState("ready")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Send(fmt.Sprintf("chunks %d", n))
				e.Eventually("turn end", 600*time.Second, func() bool { return e.Status().State == "ready" })
			}
			b.StopTimer()
			var got int
			e.Lua(`local s = require("acp")._session()
				local n = 0
				for _, b in pairs(s.transcript.tools) do
					if b.data.title == "Stream content" then
						n = n + #b.data.content
					end
				end
				return n`, &got)
			if got != n*b.N {
				b.Fatalf("%d content blocks in the chat, want %d", got, n*b.N)
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}
