package transport

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func framed(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

func TestDeframer(t *testing.T) {
	for _, c := range []struct {
		name    string
		in      string
		want    string
		reports int
	}{
		{"ndjson passes untouched", "{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n{\"b\":2}\n", 0},
		{"ndjson with leading blank lines", "\n\n{\"a\":1}\n", "{\"a\":1}\n", 0},
		{"framed", framed(`{"a":1}`) + framed(`{"b":2}`), "{\"a\":1}\n{\"b\":2}\n", 0},
		{"framed JSON spread over lines is one line", framed("{\n  \"a\": [1,\n 2]\n}"), "{\"a\":[1,2]}\n", 0},
		{"header case and other headers", "content-length: 7\r\nContent-Type: application/json\r\n\r\n{\"a\":1}", "{\"a\":1}\n", 0},
		{"LF-only header lines", "Content-Length: 7\n\n{\"a\":1}", "{\"a\":1}\n", 0},
		{"a line between framed messages", framed(`{"a":1}`) + "{\"b\":2}\n" + framed(`{"c":3}`), "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", 0},
		{"oversized framed message dropped", framed(`{"big":"`+strings.Repeat("x", 100)+`"}`) + framed(`{"a":1}`), "{\"a\":1}\n", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			reports := 0
			d := newDeframer(strings.NewReader(c.in), 64, func(string) { reports++ })
			got, err := io.ReadAll(d)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want || reports != c.reports {
				t.Fatalf("got %q (%d reports), want %q (%d)", got, reports, c.want, c.reports)
			}
		})
	}
}

func TestDeframerErrors(t *testing.T) {
	for _, in := range []string{
		"Content-Length: x\r\n\r\n{}",
		"Content-Length: 10\r\n\r\n{}",
		"Content-Length: 2\r\nOther: 1\r\n", // headers never end
	} {
		d := newDeframer(strings.NewReader(in), 1<<20, nil)
		if _, err := io.ReadAll(d); err == nil || err == io.EOF {
			t.Errorf("%q: no error", in)
		}
	}
}

// A short line that is no header is handed over at once, not held back
// waiting for the bytes a header would have.
func TestDeframerDoesNotHoldShortLines(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	d := newDeframer(r, 1<<20, nil)
	go w.Write([]byte("hi\n"))
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 16)
		n, _ := d.Read(b)
		got <- string(b[:n])
	}()
	select {
	case s := <-got:
		if s != "hi\n" {
			t.Fatalf("read %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a short line was held back")
	}
}

func TestFramer(t *testing.T) {
	var out bytes.Buffer
	f := &framer{w: &out}
	// A message in several writes, then two in one.
	for _, w := range []string{`{"a":`, "1}\n", "{\"b\":2}\n{\"c\":3}\n", "\n"} {
		if _, err := f.Write([]byte(w)); err != nil {
			t.Fatal(err)
		}
	}
	want := framed(`{"a":1}`) + framed(`{"b":2}`) + framed(`{"c":3}`)
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	// What it writes, a deframer reads back.
	back, _ := io.ReadAll(newDeframer(&out, 1<<20, nil))
	if string(back) != "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n" {
		t.Fatalf("read back %q", back)
	}
}

func TestParseFraming(t *testing.T) {
	for in, want := range map[string]Framing{"": NDJSON, "ndjson": NDJSON, "content-length": ContentLength} {
		if got, err := ParseFraming(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseFraming("lsp"); err == nil {
		t.Error("lsp accepted")
	}
}

// A process with framing = content-length: `cat` echoes what the framer
// writes, the deframer reads it back as NDJSON.
func TestProcessContentLength(t *testing.T) {
	p, err := Start(Command{Name: "cat", Argv: []string{"cat"}, Framing: ContentLength, Tag: "transport-test/"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msg := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"
	if _, err := p.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(p, buf); err != nil {
		t.Fatal(err)
	}
	if string(buf) != msg {
		t.Fatalf("read %q", buf)
	}
	go p.Close()
	if _, err := io.Copy(io.Discard, p); err != nil {
		t.Fatal(err)
	}
	<-p.Done() // at once: its stdout was read to the end
	if p.Err() == nil {
		t.Fatal("no reason after the end")
	}
}

func TestProcessNotFound(t *testing.T) {
	_, err := Start(Command{Name: "x", Argv: []string{"/nonexistent/agent"}})
	if err == nil || !strings.Contains(err.Error(), "install it or set agents.x.cmd") {
		t.Fatalf("err = %v", err)
	}
}
