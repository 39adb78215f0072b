package terminal

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRawSince: a live view following the output by offset gets every
// byte while it keeps up, only the newest max bytes (and the count of the
// skipped ones) when it does not, and OnActivity announces the output.
func TestRawSince(t *testing.T) {
	t.Parallel()
	m := newManager(t, Options{RawTail: 1000})
	var reads atomic.Int64
	o := CreateOptions{Command: "seq", Args: []string{"1", "10000"}, OnActivity: func() { reads.Add(1) }}
	id := create(t, m, o)
	waitExit(t, m, id)
	if reads.Load() == 0 {
		t.Fatal("OnActivity never called")
	}
	all := 0
	for i := 1; i <= 10000; i++ {
		all += len(strconv.Itoa(i)) + 2 // "\r\n"
	}
	// Far behind: only what the tail keeps, capped at max, newest first.
	data, next, skipped, err := m.RawSince(id, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if next != int64(all) || len(data) != 100 || skipped != int64(all-100) || !strings.HasSuffix(string(data), "9999\r\n10000\r\n") {
		t.Fatalf("RawSince(0, 100) = %d bytes ending %q, next %d (want %d), skipped %d", len(data), data[max(0, len(data)-12):], next, all, skipped)
	}
	// Keeping up: exactly the bytes since the offset.
	data, next, skipped, err = m.RawSince(id, int64(all-7), 0)
	if err != nil || string(data) != "10000\r\n" || next != int64(all) || skipped != 0 {
		t.Fatalf("RawSince(all-7) = %q, %d, %d, %v", data, next, skipped, err)
	}
	// Nothing new.
	if data, next, skipped, err = m.RawSince(id, int64(all), 10); len(data) != 0 || next != int64(all) || skipped != 0 || err != nil {
		t.Fatalf("RawSince(all) = %q, %d, %d, %v", data, next, skipped, err)
	}
	// No cap: from the oldest byte kept (the raw tail keeps RawTail to
	// 2*RawTail bytes).
	data, _, skipped, _ = m.RawSince(id, 0, 0)
	if len(data) < 1000 || len(data) > 2000 || skipped != int64(all-len(data)) || !strings.HasSuffix(string(data), "10000\r\n") {
		t.Fatalf("RawSince(0, 0) = %d bytes, skipped %d", len(data), skipped)
	}
	if err := m.Release(id); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := m.RawSince(id, 0, 0); err == nil {
		t.Fatal("RawSince after Release: no error")
	}
}
