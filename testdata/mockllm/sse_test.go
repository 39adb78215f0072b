package mockllm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// event is one server-sent event.
type event struct {
	name string
	data string
}

// decodeSSE splits a stream into events as the SDKs' decoders do: fields
// per line, an event per blank line, CRLF or LF, "data:" lines joined.
func decodeSSE(t *testing.T, r io.Reader) []event {
	t.Helper()
	var evs []event
	var cur event
	var data []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if data != nil {
				cur.data = strings.Join(data, "\n")
				evs = append(evs, cur)
			}
			cur, data = event{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			cur.name = value
		case "data":
			data = append(data, value)
		case "":
			// comment
		default:
			t.Errorf("unknown SSE field %q", field)
		}
	}
	if data != nil {
		t.Errorf("stream ended inside an event (no blank line after %q)", strings.Join(data, "\n"))
	}
	return evs
}

// post sends body to the server and returns the response.
func post(t *testing.T, h http.Handler, path string, body any) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	rec := newRecorder()
	h.ServeHTTP(rec, req)
	return rec.result()
}

// recorder is a flushing ResponseWriter for tests.
type recorder struct {
	header http.Header
	status int
	buf    bytes.Buffer
	writes int
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.buf.Write(b)
}
func (r *recorder) Flush() { r.writes++ }

func (r *recorder) result() *http.Response {
	return &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(&r.buf)}
}

func TestDecodeSSE(t *testing.T) {
	in := "event: a\r\ndata: {\"x\":1}\r\n\r\n: comment\n\ndata: one\ndata: two\n\n"
	evs := decodeSSE(t, strings.NewReader(in))
	want := []event{{"a", `{"x":1}`}, {"", "one\ntwo"}}
	if len(evs) != len(want) {
		t.Fatalf("events %+v, want %+v", evs, want)
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, evs[i], want[i])
		}
	}
}
