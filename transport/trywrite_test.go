package transport

import (
	"bytes"
	"errors"
	"testing"
)

// TestTryWrite: TryWrite writes what the agent's stdin pipe takes now and
// returns, whatever the agent does: to an agent not reading its stdin, a
// long message goes in part, then nothing goes, and neither call waits.
// WriteRest, which waits, ends with an error once the agent is gone. A
// framed stdin cannot be written this way.
func TestTryWrite(t *testing.T) {
	for _, c := range []struct {
		name    string
		framing Framing
		canTry  bool
	}{
		{"ndjson", NDJSON, true},
		{"content-length", ContentLength, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// sleep never reads its stdin.
			p, err := Start(Command{Name: c.name, Argv: []string{"sleep", "60"}, Framing: c.framing, Tag: "transport-test/"})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.CanTryWrite() != c.canTry {
				t.Fatalf("CanTryWrite %v, want %v", p.CanTryWrite(), c.canTry)
			}
			msg := bytes.Repeat([]byte("x"), 2*pipeBytes)
			if !c.canTry {
				if _, err := p.TryWrite(msg); !errors.Is(err, ErrNoTryWrite) {
					t.Fatalf("TryWrite: %v, want ErrNoTryWrite", err)
				}
				return
			}
			n, err := p.TryWrite(msg)
			if err != nil || n <= 0 || n >= len(msg) {
				t.Fatalf("TryWrite of 2 MiB to an agent not reading: %d, %v; want a part", n, err)
			}
			if m, err := p.TryWrite(msg[n:]); err != nil || m != 0 {
				t.Fatalf("TryWrite to a full pipe: %d, %v; want 0, nil", m, err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := p.WriteRest(msg[n:])
				done <- err
			}()
			p.Close()
			if err := <-done; err == nil {
				t.Fatal("WriteRest to an agent that is gone: no error")
			}
		})
	}
}
