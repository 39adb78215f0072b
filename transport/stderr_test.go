package transport

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/scrub"
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

// The last stderr lines the chat shows when a start takes long
// (acp_stderr) have the keys typed at a login masked, as the log and every
// event have: an agent echoing its key while it hangs in session/new no
// longer puts it in the chat (issue 21 item 11).
func TestStderrRPCMasksSecrets(t *testing.T) {
	const secret = "sk-typed-at-the-prompt-5c2e9a"
	secrets := scrub.New()
	secrets.Add(secret)
	h := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), secrets)
	l := newStderrLog(slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.drain(strings.NewReader("starting with KEY=" + secret + "\nwaiting for the server\n"))
	h.sessions[1] = &Session{agent: &Agent{stderr: l}}
	got, err := h.rpcStderr(1)
	if err != nil {
		t.Fatal(err)
	}
	if want := "starting with KEY=" + scrub.Mask + "\nwaiting for the server"; got != want {
		t.Fatalf("acp_stderr = %q, want %q", got, want)
	}
}
