package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestInboxRead: what one Read of the host's 1 MiB buffer gets, given what
// was pushed: every queued message at once (as a read of a pipe does), each
// made one line, blank ones skipped.
func TestInboxRead(t *testing.T) {
	for _, c := range []struct {
		name   string
		pushed []string
		want   string
	}{
		{"one", []string{`{"a":1}`}, "{\"a\":1}\n"},
		{"several at once", []string{`{"a":1}`, `{"b":2}`, `{"c":3}`}, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"},
		{"spread over lines", []string{"{\n \"a\": 1\n}"}, "{\"a\":1}\n"},
		{"not JSON", []string{"garbage\r\nmore"}, "garbage  more\n"},
		{"blank skipped", []string{" \n", `{"a":1}`}, "{\"a\":1}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := newInbox()
			for _, m := range c.pushed {
				if !in.push([]byte(m)) {
					t.Fatal("push refused")
				}
			}
			p := make([]byte, 1<<20)
			n, err := in.Read(p)
			if err != nil || string(p[:n]) != c.want {
				t.Fatalf("Read = %q, %v; want %q", p[:n], err, c.want)
			}
		})
	}
}

// TestInboxCopies: a receiver reuses its buffer for the next message; what
// it pushed before is unchanged.
func TestInboxCopies(t *testing.T) {
	in := newInbox()
	buf := []byte(`{"n":1}`)
	in.push(buf)
	copy(buf, `{"n":2}`)
	in.push(buf)
	got, _ := io.ReadAll(io.LimitReader(in, 16))
	if string(got) != "{\"n\":1}\n{\"n\":2}\n" {
		t.Fatalf("read %q", got)
	}
}

// TestInboxBound: a push waits while inboxBytes are unread, and goes on
// once the reader takes them; a message longer than the bound passes
// alone; a short Read takes a long line piecewise.
func TestInboxBound(t *testing.T) {
	for _, c := range []struct {
		name  string
		first int // bytes of the first message
	}{
		{"at the bound", inboxBytes},
		{"one longer than the bound", 3 * inboxBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := newInbox()
			big := `"` + strings.Repeat("x", c.first) + `"`
			if !in.push([]byte(big)) {
				t.Fatal("the first message was refused")
			}
			pushed := make(chan bool)
			go func() { pushed <- in.push([]byte(`{"next":1}`)) }()
			select {
			case <-pushed:
				t.Fatal("a push into a full inbox did not wait")
			case <-time.After(50 * time.Millisecond): // it waits: no event to poll for
			}
			want := big + "\n" + "{\"next\":1}\n"
			var got bytes.Buffer
			p := make([]byte, 4096)
			for got.Len() < len(want) {
				n, err := in.Read(p)
				if err != nil {
					t.Fatal(err)
				}
				got.Write(p[:n])
			}
			if !<-pushed {
				t.Fatal("the waiting push was refused")
			}
			if got.String() != want {
				t.Fatalf("read %d bytes, want %d", got.Len(), len(want))
			}
		})
	}
}

// TestInboxClose: messages queued before close are still read, then EOF;
// a push after close, and a push waiting on a full inbox, are refused.
func TestInboxClose(t *testing.T) {
	in := newInbox()
	in.push([]byte(`"` + strings.Repeat("x", inboxBytes) + `"`))
	var wg sync.WaitGroup
	refused := make(chan bool, 2)
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused <- !in.push([]byte(`{"late":1}`))
		}()
	}
	in.close()
	wg.Wait()
	for i := 0; i < 2; i++ {
		if !<-refused {
			t.Fatal("a push waiting on the full inbox was taken after close")
		}
	}
	if in.push([]byte(`{"after":1}`)) {
		t.Fatal("a push was taken after close")
	}
	got, err := io.ReadAll(in)
	if err != nil || len(got) != inboxBytes+3 {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if _, err := in.Read(make([]byte, 10)); !errors.Is(err, io.EOF) {
		t.Fatalf("Read after the end: %v", err)
	}
}

// TestInboxManyReceivers: receivers waiting on a full inbox all get in as
// the reader drains it (HTTP pushes from a goroutine per answer stream).
func TestInboxManyReceivers(t *testing.T) {
	in := newInbox()
	const senders, each = 4, 2000
	msg := []byte(`{"chunk":"` + strings.Repeat("y", 100) + `"}`)
	for i := 0; i < senders; i++ {
		go func() {
			for j := 0; j < each; j++ {
				in.push(msg)
			}
		}()
	}
	p := make([]byte, 1<<20)
	lines := 0
	deadline := time.Now().Add(30 * time.Second)
	for lines < senders*each {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages read: receivers stuck", lines, senders*each)
		}
		n, err := in.Read(p)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(p[:n], []byte("\n"))
	}
}

// TestStreamedMessageAllocs: a turn's chunks cost the client no allocation
// per message once warm: the event reader reuses its buffer, the inbox
// copies into its own, and an HTTP answer stream does not decode a
// notification (it concerns no request).
func TestStreamedMessageAllocs(t *testing.T) {
	chunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` +
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"reads **every** file"}}}}`
	drain := func(in *inbox) {
		p := make([]byte, 1<<20)
		for {
			if _, err := in.Read(p); err != nil {
				return
			}
		}
	}
	for _, c := range []struct {
		name string
		// one returns a func delivering one chunk, and a cleanup.
		one func() (func(), func())
	}{
		{"event stream", func() (func(), func()) {
			events := strings.Repeat("data: "+chunk+"\n\n", 2000)
			rd := newSSEReader(strings.NewReader(events), MaxMessage)
			in := newInbox()
			go drain(in)
			return func() {
				data, _, err := rd.next()
				if err != nil {
					t.Fatal(err)
				}
				in.push(data)
			}, in.close
		}},
		{"HTTP answer stream, a request open", func() (func(), func()) {
			c := dialHTTP(context.Background(), Remote{}, &url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/acp"}).(*httpConn)
			c.streams["1"] = func() {}
			go drain(c.in)
			msg := []byte(chunk)
			return func() { c.deliver(msg, "") }, func() { c.fail(errClosed) }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			one, done := c.one()
			defer done()
			for i := 0; i < 100; i++ {
				one() // warm: buffers grown
			}
			if n := testing.AllocsPerRun(1000, one); n >= 0.5 {
				t.Errorf("%.1f allocations per message, want none", n)
			}
		})
	}
}
