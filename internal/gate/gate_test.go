package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
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

// readAll reads g to its end, size bytes at most a Read, and returns what
// each Read gave.
func readAll(t *testing.T, g *Gate, size int) []string {
	t.Helper()
	var got []string
	buf := make([]byte, size)
	for {
		n, err := g.Read(buf)
		if n > 0 {
			got = append(got, string(buf[:n]))
		}
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestGateReadsLineByLine(t *testing.T) {
	a := `{"jsonrpc":"2.0","id":1,"result":{}}`
	b := `{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{}}`
	c := `{"jsonrpc":"2.0","id":3,"result":null}`
	in := a + "\n" + b + "\n\n" + c
	g := New(strings.NewReader(in), 10, func(int) { t.Fatal("drop") })
	got := readAll(t, g, 64)
	want := []string{a + "\n", b[:64], b[64:] + "\n", "\n", c + "\n"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("reads %q, want %q", got, want)
	}
}

func TestGateDropsOversizedLines(t *testing.T) {
	big := strings.Repeat("x", MaxLineBytes+10)
	first, last := `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n", `{"jsonrpc":"2.0","id":2,"result":{}}`+"\n"
	in := first + big + "\n" + last
	var dropped int
	g := New(strings.NewReader(in), 10, func(n int) { dropped = n })
	out, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != first+last {
		t.Fatalf("read %q", out[:min(len(out), 40)])
	}
	if dropped != len(big)+1 {
		t.Fatalf("dropped %d bytes, want %d", dropped, len(big)+1)
	}
}

// The gate hands the SDK requests, responses and session/update
// notifications, and keeps the rest from it.
func TestGateSortsLines(t *testing.T) {
	lines := []string{
		`not json`,
		`{"jsonrpc":"2.0","method":"_vendor/x","params":{"a":1}}`,
		strings.TrimSpace(updateLine(1)),
		`{"jsonrpc":"2.0","method":"qwen/notify/session/prompt-suggestion","params":{}}`,
		`{"jsonrpc":"2.0","id":0,"method":"session/update","params":{}}`,
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0"}`,
	}
	var bad []string
	var notes []string
	g := New(strings.NewReader(strings.Join(lines, "\n")), 10, nil)
	g.OnBad = func(l []byte) { bad = append(bad, strings.TrimSpace(string(l))) }
	g.OnNotify = func(m string, p json.RawMessage) { notes = append(notes, m+" "+string(p)) }
	out, err := io.ReadAll(g)
	if err != nil {
		t.Fatal(err)
	}
	want := updateLine(1) + `{"jsonrpc":"2.0","id":0,"method":"session/update (sent as a request)","params":{}}` + "\n" + lines[5] + "\n"
	if string(out) != want {
		t.Fatalf("passed\n%s\nwant\n%s", out, want)
	}
	if fmt.Sprint(bad) != fmt.Sprint([]string{"not json", `{"jsonrpc":"2.0"}`}) {
		t.Fatalf("bad lines %q", bad)
	}
	if fmt.Sprint(notes) != fmt.Sprint([]string{`_vendor/x {"a":1}`, "qwen/notify/session/prompt-suggestion {}"}) {
		t.Fatalf("notifications %q", notes)
	}
}

// readLines reads g until it fails, one value on the channel per Read.
func readLines(g *Gate) chan struct{} {
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
	return lines
}

// blockedUntilDone checks that g holds the next line back until one
// notification is done, then closes it.
func blockedUntilDone(t *testing.T, g *Gate, lines chan struct{}, what string) {
	t.Helper()
	select {
	case <-lines:
		t.Fatal(what)
	case <-time.After(100 * time.Millisecond): // proving a negative: the read must still be blocked
	}
	g.Done()
	select {
	case <-lines:
	case <-time.After(5 * time.Second):
		t.Fatal("gate did not release after done()")
	}
	g.Close()
	for range lines {
	}
}

func TestGateBlocksAtLimit(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 5; i++ {
		in.WriteString(updateLine(i))
	}
	g := New(&in, 3, nil)
	lines := readLines(g)
	for i := 0; i < 3; i++ {
		<-lines
	}
	blockedUntilDone(t, g, lines, "gate let a 4th notification through with 3 in flight")
}

// The gate also bounds the bytes in flight: big notifications wait for
// earlier ones to be handled, however few there are.
func TestGateBoundsBytesInFlight(t *testing.T) {
	big := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"n":%d,"pad":"%s"}}}`+"\n", i, strings.Repeat("x", 1000))
	}
	var in bytes.Buffer
	for i := 0; i < 4; i++ {
		in.WriteString(big(i))
	}
	g := New(&in, 100, nil)
	g.maxBytes = 2*len(big(0)) + 10 // room for two
	lines := readLines(g)
	<-lines
	<-lines
	blockedUntilDone(t, g, lines, "gate let a third big notification through with two in flight")
}

// streamThroughSDK sends n session/update notifications through an
// acp-go-sdk connection as fast as a pipe takes them, with a handler that
// spends delay per notification, and reports how many arrived in order and
// whether the connection survived.
func streamThroughSDK(t testing.TB, n int, delay time.Duration, gated bool) (int, bool) {
	pr, pw := io.Pipe()
	var r io.Reader = pr
	var g *Gate
	if gated {
		g = New(pr, Limit, func(int) {})
		r = g
	}
	var got atomic.Int64
	var inOrder atomic.Bool
	inOrder.Store(true)
	done := make(chan struct{})
	var once sync.Once
	handler := func(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
		if g != nil {
			defer g.Done()
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
	conn.SetLogger(slog.New(slog.DiscardHandler))
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

// FuzzGate: whatever an agent writes, the gate never panics and hands the
// SDK, in order and unchanged, every request and response line; it drops
// what is not JSON-RPC (to OnBad) and notifications other than
// session/update (to OnNotify), renames session/update requests, and
// counts exactly the session/update notifications it passes.
func FuzzGate(f *testing.F) {
	f.Add([]byte(updateLine(1) + "garbage\n" + updateLine(2)))
	f.Add([]byte("no newline at all"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"session/update","params":` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"_x/y","params":{}}` + "\n" + updateLine(3) + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":0,"method":"session/update","params":{}}` + "\n" + `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var bad, notified int
		g := New(bytes.NewReader(data), 1<<30, func(int) { t.Fatal("no line here is oversized") })
		g.OnBad = func([]byte) { bad++ }
		g.OnNotify = func(string, json.RawMessage) { notified++ }
		var out [][]byte
		counted := 0
		buf := make([]byte, 1<<16)
		var cur []byte
		for {
			n, err := g.Read(buf)
			cur = append(cur, buf[:n]...)
			if n > 0 && cur[len(cur)-1] == '\n' {
				out = append(out, cur)
				if g.counted {
					counted++
				}
				cur = nil
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		var in [][]byte
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if len(l) > 0 {
				if l[len(l)-1] != '\n' {
					l = append(append([]byte{}, l...), '\n')
				}
				in = append(in, l)
			}
		}
		if len(in) != len(out)+bad+notified {
			t.Fatalf("%d lines in, %d out, %d bad, %d notifications", len(in), len(out), bad, notified)
		}
		updates := 0
		j := 0
		for _, l := range in {
			var m envelope
			blank := len(bytes.TrimSpace(l)) == 0
			if !blank && (json.Unmarshal(l, &m) != nil || (m.ID == nil && m.Method == "")) {
				continue // bad
			}
			if !blank && m.ID == nil && m.Method != acp.ClientMethodSessionUpdate && m.Method != "$/cancel_request" {
				continue // handed to OnNotify
			}
			if j >= len(out) {
				t.Fatalf("line %q missing from the output", l)
			}
			got := out[j]
			j++
			if !blank && m.ID != nil && m.Method == acp.ClientMethodSessionUpdate {
				var r envelope
				if json.Unmarshal(got, &r) != nil || r.Method != requestedUpdate || string(*r.ID) != string(*m.ID) {
					t.Fatalf("session/update request %q became %q", l, got)
				}
				continue
			}
			if !bytes.Equal(got, l) {
				t.Fatalf("gate changed %q into %q", l, got)
			}
			if !blank && m.ID == nil && m.Method == acp.ClientMethodSessionUpdate {
				updates++
			}
		}
		if updates != counted {
			t.Fatalf("counted %d updates, passed %d", counted, updates)
		}
	})
}

// chunkReader returns its chunks one a Read, each offered to take first,
// as transport.Process offers what it reads to Gate.Take.
type chunkReader struct {
	chunks []string
	take   func([]byte) int
}

func (r *chunkReader) Read(b []byte) (int, error) {
	for len(r.chunks) > 0 {
		n := copy(b, r.chunks[0])
		r.chunks = r.chunks[1:]
		if k := r.take(b[:n]); k > 0 {
			if n = copy(b, b[k:n]); n == 0 {
				continue
			}
		}
		return n, nil
	}
	return 0, io.EOF
}

// TestGateTake: lines taken as they are read and lines taken by Read are
// one stream: each line is traced and offered to Intercept once, in order,
// and the SDK gets the others in order; nothing is taken while part of a
// line waits in the gate.
func TestGateTake(t *testing.T) {
	fs := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{}}`+"\n", i)
	}
	sdk := func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", i) }
	s6 := sdk(6)
	r := &chunkReader{chunks: []string{
		fs(1) + fs(2) + sdk(3) + fs(4), // taken, taken, declined: the rest to Read
		fs(5) + s6[:10],                // taken; part of a line stays in the gate
		s6[10:] + fs(7),                // nothing taken: the gate holds part of a line
		fs(8),                          // taken
	}}
	g := New(r, 10, func(int) { t.Fatal("drop") })
	early := 0 // lines taken as they were read
	r.take = func(b []byte) int {
		k := g.Take(b)
		early += bytes.Count(b[:k], []byte("\n"))
		return k
	}
	var traced, offered []string
	took := map[string]bool{}
	g.Trace = func(line []byte) { traced = append(traced, string(line)) }
	g.Intercept = func(line []byte) bool {
		offered = append(offered, string(line))
		if bytes.Contains(line, []byte(`"fs/`)) {
			took[string(line)] = true
			return true
		}
		return false
	}
	got := readAll(t, g, 4096)
	all := []string{fs(1), fs(2), sdk(3), fs(4), fs(5), s6, fs(7), fs(8)}
	if fmt.Sprint(got) != fmt.Sprint([]string{sdk(3), s6}) {
		t.Errorf("the SDK got %q", got)
	}
	if fmt.Sprint(traced) != fmt.Sprint(all) {
		t.Errorf("traced %q, want each line once, in order", traced)
	}
	if fmt.Sprint(offered) != fmt.Sprint(all) {
		t.Errorf("offered %q, want each line once, in order", offered)
	}
	if len(took) != 6 || early != 4 {
		t.Errorf("took %d lines, %d as they were read; want 6, 4", len(took), early)
	}
}
