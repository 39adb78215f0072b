package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

func updateLine(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"c%d\n"}}}}`+"\n", i)
}

func TestIsUpdateNotification(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{updateLine(1), true},
		{`{"jsonrpc":"2.0","id":0,"method":"session/update","params":{}}`, false}, // a request, id 0 is real
		{`{"jsonrpc":"2.0","id":"x","method":"session/update"}`, false},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","error":"bad"}`, false}, // the SDK cannot decode it either
		{`{"jsonrpc":2,"method":"session/update","params":{}}`, false},       // nor this: never counted, never awaited
		{`not json "session/update"`, false},
		{`{"jsonrpc":"2.0","id":3,"result":{"text":"session/update"}}`, false},
		{"", false},
	} {
		if got := isUpdateNotification([]byte(tc.line)); got != tc.want {
			t.Errorf("isUpdateNotification(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestGateReadsLineByLine(t *testing.T) {
	in := "a\nbb\n\nccc"
	g := newGate(strings.NewReader(in), 10, func(int) { t.Fatal("drop") })
	var got []string
	buf := make([]byte, 64)
	for {
		n, err := g.Read(buf)
		if n > 0 {
			got = append(got, string(buf[:n]))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a\n", "bb\n", "\n", "ccc\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reads %q, want %q", got, want)
	}
}

func TestGateDropsOversizedLines(t *testing.T) {
	big := strings.Repeat("x", maxLineBytes+10)
	in := "first\n" + big + "\nlast\n"
	var dropped int
	g := newGate(strings.NewReader(in), 10, func(n int) { dropped = n })
	out, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "first\nlast\n" {
		t.Fatalf("read %q", out[:min(len(out), 40)])
	}
	if dropped != len(big)+1 {
		t.Fatalf("dropped %d bytes, want %d", dropped, len(big)+1)
	}
}

func TestGateBlocksAtLimit(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 5; i++ {
		in.WriteString(updateLine(i))
	}
	g := newGate(&in, 3, nil)
	lines := make(chan struct{}, 10)
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := g.Read(buf); err != nil {
				close(lines)
				return
			}
			lines <- struct{}{}
		}
	}()
	for i := 0; i < 3; i++ {
		<-lines
	}
	select {
	case <-lines:
		t.Fatal("gate let a 4th notification through with 3 in flight")
	case <-time.After(100 * time.Millisecond): // proving a negative: the read must still be blocked
	}
	g.done()
	select {
	case <-lines:
	case <-time.After(5 * time.Second):
		t.Fatal("gate did not release after done()")
	}
	g.close()
	for range lines {
	}
}

// streamThroughSDK sends n session/update notifications through an
// acp-go-sdk connection as fast as a pipe takes them, with a handler that
// spends delay per notification, and reports how many arrived in order and
// whether the connection survived.
func streamThroughSDK(t testing.TB, n int, delay time.Duration, gated bool) (int, bool) {
	pr, pw := io.Pipe()
	var r io.Reader = pr
	var g *gate
	if gated {
		g = newGate(pr, gateLimit, func(int) {})
		r = g
	}
	var got atomic.Int64
	var inOrder atomic.Bool
	inOrder.Store(true)
	done := make(chan struct{})
	var once sync.Once
	handler := func(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
		if g != nil {
			defer g.done()
		}
		var p struct {
			Update struct {
				Content struct{ Text string } `json:"content"`
			} `json:"update"`
		}
		_ = json.Unmarshal(params, &p)
		i := got.Add(1) - 1
		if p.Update.Content.Text != fmt.Sprintf("c%d\n", i) {
			inOrder.Store(false)
		}
		if delay > 0 {
			time.Sleep(delay) // simulates a slow UI
		}
		if int(i) == n-1 {
			once.Do(func() { close(done) })
		}
		return nil, nil
	}
	conn := acp.NewConnection(handler, io.Discard, r)
	conn.SetLogger(discardLogger())
	go func() {
		for i := 0; i < n; i++ {
			if _, err := io.WriteString(pw, updateLine(i)); err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-conn.Done():
	case <-time.After(60 * time.Second):
		t.Fatal("stream did not finish")
	}
	alive := true
	select {
	case <-conn.Done():
		alive = false
	default:
	}
	pw.Close()
	if !inOrder.Load() {
		t.Fatal("notifications arrived out of order")
	}
	return int(got.Load()), alive
}

func TestSlowHandlerOverflowsSDKWithoutGate(t *testing.T) {
	// Documents why the gate exists: acp-go-sdk v0.13.0 closes the
	// connection when 1024 notifications wait for a slow handler.
	got, alive := streamThroughSDK(t, 3000, 200*time.Microsecond, false)
	if alive || got >= 3000 {
		t.Fatalf("expected the SDK to drop the connection (got %d, alive %v); if it no longer does, the gate may be unnecessary", got, alive)
	}
}

func TestGateKeepsSlowStreamAlive(t *testing.T) {
	got, alive := streamThroughSDK(t, 3000, 200*time.Microsecond, true)
	if !alive || got != 3000 {
		t.Fatalf("got %d of 3000, alive %v", got, alive)
	}
}

// BenchmarkStream20000Chunks measures 20,000 session/update notifications
// through acp-go-sdk with a handler that decodes each one, with the gate and
// without it (the reference; it may lose the connection, reported as lost).
func BenchmarkStream20000Chunks(b *testing.B) {
	for _, gated := range []bool{true, false} {
		name := map[bool]string{true: "gated", false: "ungated"}[gated]
		b.Run(name, func(b *testing.B) {
			lost := 0
			for i := 0; i < b.N; i++ {
				got, alive := streamThroughSDK(b, 20000, 0, gated)
				if got != 20000 || !alive {
					if gated {
						b.Fatalf("got %d alive %v", got, alive)
					}
					lost++
				}
			}
			b.ReportMetric(float64(20000*b.N)/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(float64(lost), "lost-connections")
		})
	}
}

// FuzzGate: whatever an agent writes, the gate never panics, never blocks
// without notifications in flight beyond its limit, and passes every line
// through unchanged (a last line without newline gets one).
func FuzzGate(f *testing.F) {
	f.Add([]byte(updateLine(1) + "garbage\n" + updateLine(2)))
	f.Add([]byte("no newline at all"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := newGate(bytes.NewReader(data), 1<<30, func(int) { t.Fatal("no line here is oversized") })
		out, err := io.ReadAll(g)
		if err != nil {
			t.Fatal(err)
		}
		want := data
		if len(want) > 0 && want[len(want)-1] != '\n' {
			want = append(append([]byte{}, want...), '\n')
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("gate changed the stream:\n in %q\nout %q", data, out)
		}
	})
}
