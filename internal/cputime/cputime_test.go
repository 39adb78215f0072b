package cputime

import (
	"testing"
	"time"
)

// TestProcess: CPU time spent spinning shows up as this process's CPU time,
// and never goes backwards.
func TestProcess(t *testing.T) {
	before, err := Process(0)
	if err != nil {
		t.Skip(err) // not Linux
	}
	now := before
	for deadline := time.Now().Add(10 * time.Second); now-before < 10*time.Millisecond; {
		if time.Now().After(deadline) {
			t.Fatalf("10 s of spinning counted as %v of CPU", now-before)
		}
		for i := 0; i < 1e6; i++ {
			_ = i * i
		}
		next, err := Process(0)
		if err != nil {
			t.Fatal(err)
		}
		if next < now {
			t.Fatalf("CPU time went back from %v to %v", now, next)
		}
		now = next
	}
}
