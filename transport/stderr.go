package transport

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Bounds of what an agent's stderr costs: its last stderrTail bytes are
// kept for error messages; lines are logged at most stderrRate bytes a
// second (bursts of stderrBurst) and stderrTotal bytes in all, each cut to
// stderrLine bytes. The rest is counted and the count logged.
const (
	stderrTail  = 8 << 10
	stderrLine  = 2 << 10
	stderrRate  = 32 << 10
	stderrBurst = 256 << 10
	stderrTotal = 4 << 20
)

// fatalLines are what agents print on stderr when they will never answer
// (a Claude adapter run as root without IS_SANDBOX=1): on one, starting
// fails at once rather than waiting out its limit.
var fatalLines = []string{"cannot be used with root/sudo privileges"}

// stderrLog reads an agent's stderr: it logs it within bounds and keeps its
// tail.
type stderrLog struct {
	log *slog.Logger
	now func() time.Time

	done  chan struct{} // closed when drain returns
	fatal chan struct{} // closed on the first line of fatalLines

	fatalLine string // that line (under mu)

	mu      sync.Mutex
	tail    []byte  // last stderrTail bytes
	tokens  float64 // bytes that may be logged now
	last    time.Time
	logged  int // bytes logged in all
	skipped int // bytes not logged since the last report
	dropped int // bytes not logged in all
	total   int // bytes read
}

func newStderrLog(log *slog.Logger) *stderrLog {
	return &stderrLog{log: log, now: time.Now, tokens: stderrBurst, done: make(chan struct{}), fatal: make(chan struct{})}
}

// drain reads r to its end.
func (l *stderrLog) drain(r io.Reader) {
	defer close(l.done)
	buf := make([]byte, 32<<10)
	var partial []byte
	for {
		n, err := r.Read(buf)
		if n > 0 {
			l.keep(buf[:n])
			data := buf[:n]
			for {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					if len(partial) < stderrLine {
						partial = append(partial, data[:min(len(data), stderrLine-len(partial))]...)
					}
					break
				}
				line := data[:i]
				if len(partial) > 0 {
					line = append(partial, line[:min(len(line), max(stderrLine-len(partial), 0))]...)
					partial = partial[:0]
				}
				l.line(line, i+1)
				data = data[i+1:]
			}
		}
		if err != nil {
			if len(partial) > 0 {
				l.line(partial, len(partial))
			}
			l.mu.Lock()
			dropped, total := l.dropped, l.total
			l.mu.Unlock()
			// Said whenever any of it was not logged, even when the
			// last lines were (the rate allowed them again).
			if dropped > 0 {
				l.log.Info("agent stderr ended", "bytes", total, "not_logged", dropped)
			}
			return
		}
	}
}

// keep appends p to the tail.
func (l *stderrLog) keep(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += len(p)
	if len(p) >= stderrTail {
		l.tail = append(l.tail[:0], p[len(p)-stderrTail:]...)
		return
	}
	if over := len(l.tail) + len(p) - stderrTail; over > 0 {
		l.tail = append(l.tail[:0], l.tail[over:]...)
	}
	l.tail = append(l.tail, p...)
}

// line logs one line (size bytes of stderr) if the budget allows, and
// notes a fatal one.
func (l *stderrLog) line(line []byte, size int) {
	l.mu.Lock()
	if l.fatalLine == "" {
		for _, f := range fatalLines {
			if bytes.Contains(line, []byte(f)) {
				l.fatalLine = strings.TrimSpace(string(line))
				close(l.fatal)
				break
			}
		}
	}
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.tokens+now.Sub(l.last).Seconds()*stderrRate, stderrBurst)
	}
	l.last = now
	if l.tokens < float64(size) || l.logged+size > stderrTotal {
		l.skipped += size
		l.dropped += size
		l.mu.Unlock()
		return
	}
	l.tokens -= float64(size)
	l.logged += size
	skipped := l.skipped
	l.skipped = 0
	l.mu.Unlock()
	if skipped > 0 {
		l.log.Info("agent stderr: output not logged (too much)", "bytes", skipped)
	}
	s := string(line)
	if len(s) > stderrLine {
		s = truncate(s, stderrLine)
	}
	l.log.Info("agent stderr", "line", s)
}

// lastLines returns up to n of the last lines of stderr, for an error
// message ("" when there is none).
func (l *stderrLog) lastLines(n int) string {
	l.mu.Lock()
	t := string(l.tail)
	l.mu.Unlock()
	lines := strings.Split(strings.TrimRight(t, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, s := range lines {
		lines[i] = truncate(s, 300)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// withStderr adds the last lines of an agent's stderr to err's message.
func withStderr(err error, l *stderrLog) error {
	if l == nil {
		return err
	}
	if s := l.lastLines(5); s != "" {
		return fmt.Errorf("%w\nlast stderr:\n%s", err, s)
	}
	return err
}
