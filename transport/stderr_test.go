package transport

import (
	"bytes"
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
