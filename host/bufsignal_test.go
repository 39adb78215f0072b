package host

import (
	"context"
	"sync"
	"testing"
)

// TestLoadsPendingAsksOnce: reads that find a buffer loaded at once (a
// rewind writes 16 files at a time right after a load) share one
// question of Neovim's load number instead of queueing one each behind
// its loop; a load drained after that question is asked again.
func TestLoadsPendingAsksOnce(t *testing.T) {
	f := newFSBench(t)
	defer f.closer()
	h := f.s.h
	ctx := context.Background()
	h.loadsPending(ctx) // the change pipe opened, the number asked once
	if err := f.nv.ExecLua(`local b = require("acp.buffers")
		local gen = b.load_gen
		_G.asked = 0
		b.load_gen = function() _G.asked = _G.asked + 1; return gen() end`, nil); err != nil {
		t.Fatal(err)
	}
	asked := func() int {
		var n int
		if err := f.nv.ExecLua(`return _G.asked`, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		name    string
		readers int
		want    int
	}{
		{"one reader", 1, 1},
		{"16 readers at once", 16, 1},
		{"again after another load", 16, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := asked()
			// A drain found a buffer loaded ("L" on the change pipe).
			h.bufs.sig.mu.Lock()
			h.bufs.sig.loads++
			h.bufs.sig.mu.Unlock()
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range c.readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					h.loadsPending(ctx)
				}()
			}
			close(start)
			wg.Wait()
			if got := asked() - before; got != c.want {
				t.Fatalf("Neovim asked %d times for its load number, want %d", got, c.want)
			}
		})
	}
}
