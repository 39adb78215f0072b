package chatlog

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSave: each iteration rewrites a chat's last 111 lines as 110
// (a turn's lines), then appends one, in chats of 1,000 and 200,000 lines:
// the cost follows the change, not the chat (go test -bench Save ./chatlog/).
func BenchmarkSave(b *testing.B) {
	turn := make([]string, 110)
	for i := range turn {
		turn[i] = strings.Repeat("a line of the answer ", 4)
	}
	for _, n := range []int{1000, 200000} {
		b.Run(fmt.Sprintf("%d-lines", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "chat.txt")
			chat := make([]string, n)
			for i := range chat {
				chat[i] = turn[0]
			}
			w := New()
			if err := w.Save(path, 0, chat, 0o600); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// The file keeps n lines from one iteration to the next.
				if err := w.Save(path, n-1-len(turn), turn, 0o600); err != nil {
					b.Fatal(err)
				}
				if err := w.Save(path, n-1, []string{turn[0]}, 0o600); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
