package e2e

import (
	"strings"
	"testing"
	"time"
)

// BenchmarkStreamEndToEnd measures a turn of 20,000 streamed chunks from the
// fake agent until the last one is in the chat buffer of a real Neovim.
func BenchmarkStreamEndToEnd(b *testing.B) {
	const n = 20000
	e := startEditor(b)
	e.SetupFake(M{"turns": []any{[]any{M{"chunks": n, "prefix": "chunk-"}, text("THE END")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Send("stream")
		e.Eventually("turn end", 120*time.Second, func() bool { return e.Status().State != "busy" })
		if st := e.Status(); st.State != "ready" {
			b.Fatalf("state %+v", st)
		}
	}
	b.StopTimer()
	if got := strings.Count(e.ChatText(), "chunk-19999\n"); got != b.N {
		b.Fatalf("%d complete streams in the chat, want %d", got, b.N)
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "chunks/s")
}
