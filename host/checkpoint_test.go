package host

import (
	"sync"
	"testing"
)

// serial runs jobs in the order they were queued, one at a time, however
// their goroutines are scheduled: the first holds the others back until
// all are queued.
func TestCheckpointsSerial(t *testing.T) {
	var c checkpoints
	var mu sync.Mutex
	var got []int
	running := 0
	release := make(chan struct{})
	all := make(chan struct{})
	const n = 100
	for i := 0; i < n; i++ {
		c.serial(func() {
			mu.Lock()
			running++
			if running > 1 {
				t.Errorf("job %d runs beside another", i)
			}
			mu.Unlock()
			if i == 0 {
				<-release
			}
			mu.Lock()
			got = append(got, i)
			running--
			if len(got) == n {
				close(all)
			}
			mu.Unlock()
		})
	}
	close(release)
	<-all
	for i, v := range got {
		if v != i {
			t.Fatalf("jobs ran in the order %v", got)
		}
	}
}
