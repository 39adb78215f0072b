package transport

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestStderrLogIsBounded(t *testing.T) {
	var out bytes.Buffer
	l := newStderrLog(slog.New(slog.NewTextHandler(&out, nil)))
	clock := time.Unix(0, 0)
	l.now = func() time.Time { return clock }
	line := strings.Repeat("e", 99) + "\n"
	// 50 MB at once: the burst is logged, the rest counted.
	l.drain(strings.NewReader(strings.Repeat(line, 500_000) + "the last words\n"))
	if n := out.Len(); n > 2*stderrBurst {
		t.Fatalf("logged %d bytes of 50 MB in one burst", n)
	}
	if !strings.Contains(out.String(), "not_logged=") {
		t.Fatalf("the dropped bytes are not reported:\n%s", out.String()[out.Len()-300:])
	}
	if got := l.lastLines(2); got != strings.TrimSpace(line)+"\nthe last words" {
		t.Fatalf("lastLines = %q", got)
	}
	if len(l.tail) > stderrTail {
		t.Fatalf("tail of %d bytes", len(l.tail))
	}
}

func TestStderrLogRateAndTotal(t *testing.T) {
	var out bytes.Buffer
	l := newStderrLog(slog.New(slog.NewTextHandler(&out, nil)))
	clock := time.Unix(0, 0)
	l.now = func() time.Time { return clock }
	line := []byte(strings.Repeat("e", 1023))
	logged := func() int { return strings.Count(out.String(), `msg="agent stderr" line=`) }
	for i := 0; i < stderrBurst/1024; i++ {
		l.line(line, 1024)
	}
	if n := logged(); n != stderrBurst/1024 {
		t.Fatalf("burst: %d lines logged", n)
	}
	l.line(line, 1024)
	if n := logged(); n != stderrBurst/1024 {
		t.Fatal("logged past the burst")
	}
	clock = clock.Add(time.Second) // the rate refills
	for i := 0; i < stderrRate/1024; i++ {
		l.line(line, 1024)
	}
	if n := logged(); n != (stderrBurst+stderrRate)/1024 {
		t.Fatalf("after a second: %d lines logged", n)
	}
	// Never more than stderrTotal however slowly it comes.
	for i := 0; i < 2*stderrTotal/1024; i++ {
		clock = clock.Add(time.Second)
		l.line(line, 1024)
	}
	if n := logged(); n*1024 > stderrTotal {
		t.Fatalf("%d KiB logged, cap %d KiB", n, stderrTotal/1024)
	}
}

// The end of a stream part of which was not logged is said, also when
// the rate allowed its last lines again (the report of the bytes not
// logged came before them).
func TestStderrLogEndSaidAfterLoggedLines(t *testing.T) {
	var out bytes.Buffer
	l := newStderrLog(slog.New(slog.NewTextHandler(&out, nil)))
	clock := time.Unix(0, 0)
	l.now = func() time.Time { return clock }
	line := strings.Repeat("e", 1023) + "\n"
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		l.drain(r)
		close(done)
	}()
	if _, err := io.WriteString(w, strings.Repeat(line, 2*stderrBurst/1024)); err != nil {
		t.Fatal(err)
	}
	// io.Pipe: drain has taken every byte written when the write
	// returns; what it logs is in out once it has handled them, which
	// the next write waits for.
	if _, err := io.WriteString(w, ""); err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	clock = clock.Add(time.Minute) // the rate refills
	l.mu.Unlock()
	if _, err := io.WriteString(w, "the last words\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	<-done
	log := out.String()
	last := strings.LastIndex(log, "the last words")
	if last < 0 || strings.LastIndex(log, "not logged (too much)") > last {
		t.Fatalf("the last line was not logged after the report:\n%s", log[max(0, len(log)-600):])
	}
	if !strings.Contains(log[last:], "agent stderr ended") || !strings.Contains(log[last:], "not_logged=") {
		t.Fatalf("the end is not said:\n%s", log[max(0, len(log)-600):])
	}
}
