package host

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Saves are applied in the order sent, and a flush waits for the saves
// sent before its mark, whether the mark is reached before or after the
// flush asks (Neovim exits: its chats must be on disk).
func TestSaverAppliesInOrderAndFlushes(t *testing.T) {
	for _, c := range []struct {
		name       string
		markFirst  bool // the mark reached before the flush asks
		wantLines  string
		saves      []historySave
		flushToken int
	}{
		{"mark then flush", true, "a\nb\nc", []historySave{{From: 0, Lines: []string{"a"}}, {From: 1, Lines: []string{"b", "c"}}}, 1},
		{"flush then mark", false, "a\nB", []historySave{{From: 0, Lines: []string{"a", "b"}}, {From: 1, Lines: []string{"B"}}}, 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chat.txt")
			s := newSaver()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.run(ctx, func(hs *historySave) {
					if err := s.w.Save(hs.Path, hs.From, hs.Lines, 0o600); err != nil {
						t.Errorf("save: %v", err)
					}
				})
			}()
			defer func() { cancel(); <-done }()
			for i := range c.saves {
				c.saves[i].Path = path
				s.add(historyJob{save: &c.saves[i]})
			}
			if c.markFirst {
				s.add(historyJob{mark: c.flushToken})
				for s.markReached(c.flushToken) == false {
					time.Sleep(time.Millisecond) // polling interval
				}
			} else {
				go func() { s.add(historyJob{mark: c.flushToken}) }()
			}
			select {
			case <-s.mark(c.flushToken):
			case <-time.After(10 * time.Second):
				t.Fatal("the flush never returned")
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != c.wantLines {
				t.Fatalf("file %q (%v), want %q", b, err, c.wantLines)
			}
		})
	}
}

func (s *saver) markReached(token int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reached >= token
}
