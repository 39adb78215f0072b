package chatsearch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkSearch: 1,000 saved chats of 50 KB (50 MB) in 20 projects, the
// text looked for in 1 chat of 10 (the newest ones among them), and in
// none. Reported: ms to the first chat's hits (first-ms), and to the end
// (the benchmark's ns/op). Issue 29 asks < 200 ms to the first results
// (go test -bench Search ./chatsearch/).
func BenchmarkSearch(b *testing.B) {
	root := b.TempDir()
	para := strings.Repeat("The agent read the parser and wrote a test for the lexer. ", 16) // ~ 1 KB
	t0 := time.Now()
	for i := range 1000 {
		var sb strings.Builder
		for j := 0; sb.Len() < 50<<10; j++ {
			if j%10 == 0 {
				who := "You"
				if j%20 == 10 {
					who = "fake"
				}
				sb.WriteString("## " + who + "\n")
			}
			sb.WriteString(para)
			if i%10 == 0 && j == 25 {
				sb.WriteString("the rare needle word here ")
			}
			sb.WriteString("\n")
		}
		saveChat(b, root, fmt.Sprintf("project-%02d", i%20), fmt.Sprintf("chat-%04d", i), sb.String(), t0.Add(-time.Duration(i)*time.Second))
	}
	for _, q := range []string{"rare needle", "nowhere to be found"} {
		b.Run(strings.ReplaceAll(q, " ", "-"), func(b *testing.B) {
			var first time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				var got time.Duration
				sum, err := Search(context.Background(), root, q, Options{}, func(Chat) {
					if got == 0 {
						got = time.Since(start)
					}
				})
				if err != nil || sum.Chats != 1000 {
					b.Fatalf("%+v %v", sum, err)
				}
				if got == 0 {
					got = time.Since(start) // no hit: the answer "none" is the first result
				}
				first = max(first, got)
			}
			b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
		})
	}
}
