// Command rawagent is the floor's agent in nvim-acp's client benchmarks
// (e2e/acp_bench_test.go with BENCH_AGENT=raw): no SDK and no JSON
// decoding on the timed path. It reads its stdin itself, answers
// initialize, session/new and session/prompt from fixed bytes, and runs each
// prompt as one measurement, given as words (as testdata/benchagent):
//
//	read PATH N [LINE LIMIT]   N sequential fs/read_text_file
//	write PATH N               read PATH, then N fs/write_text_file of a
//	                           3-line change (lines 101-103, two versions in turn)
//
// Each request is written from bytes encoded before the clock starts, and
// its response is found by its id at the start of a line and read whole,
// not decoded: a latency is the client's work plus two pipe crossings, so a
// client's cost shows undiluted by the agent's (testdata/benchagent decodes
// each answer with acp-go-sdk, which for small reads costs more than the
// client). It appends the same JSON line per prompt to $BENCH_AGENT_OUT.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
)

type result struct {
	Op    string  `json:"op"`
	N     int     `json:"n"`
	Bytes int     `json:"bytes"`
	Lat   []int64 `json:"lat_ns"`
	CPU   int64   `json:"cpu_ns"`
	Error string  `json:"error,omitempty"`
}

type agent struct {
	r      *bufio.Reader
	w      *os.File
	sid    string
	nextID int
}

func main() {
	a := &agent{r: bufio.NewReaderSize(os.Stdin, 1<<20), w: os.Stdout, nextID: 1 << 20}
	if err := a.serve(); err != nil {
		fmt.Fprintln(os.Stderr, "rawagent:", err)
		os.Exit(1)
	}
}

// envelope is what the agent decodes of the client's requests (not timed).
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (a *agent) serve() error {
	for {
		line, err := a.r.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, os.ErrClosed) || len(line) == 0 {
				return nil
			}
			return err
		}
		var m envelope
		if json.Unmarshal(line, &m) != nil || m.Method == "" || m.ID == nil {
			continue // a notification or a stray response
		}
		switch m.Method {
		case "initialize":
			a.reply(m.ID, `{"protocolVersion":1,"agentCapabilities":{}}`)
		case "session/new":
			a.reply(m.ID, `{"sessionId":"bench"}`)
		case "session/prompt":
			var p struct {
				SessionID string `json:"sessionId"`
				Prompt    []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			}
			_ = json.Unmarshal(m.Params, &p)
			a.sid = p.SessionID
			var text string
			for _, b := range p.Prompt {
				text += b.Text
			}
			res := a.run(strings.Fields(text))
			stop := "end_turn"
			if res.Error != "" {
				stop = "refusal"
			}
			if err := record(res); err != nil {
				return err
			}
			a.reply(m.ID, `{"stopReason":"`+stop+`"}`)
		default:
			a.write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"method not found"}}` + "\n"))
		}
	}
}

func (a *agent) reply(id json.RawMessage, result string) {
	a.write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + "}\n"))
}

func (a *agent) write(b []byte) {
	if _, err := a.w.Write(b); err != nil {
		os.Exit(1)
	}
}

func record(r result) error {
	out := os.Getenv("BENCH_AGENT_OUT")
	if out == "" {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write(append(b, '\n'))
	return err
}

func atoi(words []string, i int) int {
	if i >= len(words) {
		return 0
	}
	n, _ := strconv.Atoi(words[i])
	return n
}

// think waits $BENCH_THINK (a duration), as a model takes time before its
// first tool call: the client's own work on a prompt (showing it, its
// chat) is then done before the first request, as it is in use, not timed
// inside it.
func think() {
	if d, err := time.ParseDuration(os.Getenv("BENCH_THINK")); err == nil {
		time.Sleep(d)
	}
}

func (a *agent) run(w []string) (res result) {
	if len(w) < 3 {
		return result{Error: "want: read|write PATH N ..."}
	}
	res = result{Op: w[0], N: atoi(w, 2)}
	think()
	cpu0, _ := cputime.Process(0)
	var err error
	switch w[0] {
	case "read":
		err = a.reads(w[1], res.N, atoi(w, 3), atoi(w, 4), &res)
	case "write":
		err = a.writes(w[1], res.N, &res)
	default:
		err = fmt.Errorf("unknown op %q", w[0])
	}
	if cpu1, e := cputime.Process(0); e == nil {
		res.CPU = int64(cpu1 - cpu0)
	}
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

// request is one request's line, encoded once, and its id.
type request struct {
	id   int
	line []byte
}

// encode makes the request line of method with params under a fresh id.
func (a *agent) encode(method string, params any) (request, error) {
	a.nextID++
	b, err := json.Marshal(params)
	// The members in acp-go-sdk's order, as agents send them.
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", a.nextID, method, b)
	return request{a.nextID, line}, err
}

// roundTrip sends req and returns the line of its response (valid until
// the next read).
func (a *agent) roundTrip(req request) ([]byte, error) {
	a.write(req.line)
	prefix := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(req.id) + `,`)
	for {
		line, err := a.r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			// A response longer than the buffer: the rest of it.
			var more []byte
			more, err = a.r.ReadSlice('\n')
			line = append(append([]byte(nil), line...), more...)
		}
		if err != nil {
			return nil, err
		}
		if bytes.HasPrefix(line, prefix) {
			if bytes.HasPrefix(line[len(prefix):], []byte(`"error"`)) {
				return nil, fmt.Errorf("error response: %s", line)
			}
			return line, nil
		}
		// Anything else (session/update notifications) is not ours.
	}
}

func (a *agent) readRequest(path string, line, limit int) (request, error) {
	p := struct {
		SessionID string `json:"sessionId"`
		Path      string `json:"path"`
		Line      int    `json:"line,omitempty"`
		Limit     int    `json:"limit,omitempty"`
	}{a.sid, path, line, limit}
	return a.encode("fs/read_text_file", p)
}

// content decodes a read's response (outside the timed loop).
func content(line []byte) (string, error) {
	var m struct {
		Result struct {
			Content string `json:"content"`
		} `json:"result"`
	}
	err := json.Unmarshal(line, &m)
	return m.Result.Content, err
}

func (a *agent) reads(path string, n, line, limit int, res *result) error {
	var lens []int
	for i := 0; i <= n; i++ {
		// A new id per request, as any agent sends, encoded before the clock.
		req, err := a.readRequest(path, line, limit)
		if err != nil {
			return err
		}
		t0 := time.Now()
		got, err := a.roundTrip(req)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if i == 0 {
			text, err := content(got)
			if err != nil {
				return err
			}
			res.Bytes = len(text)
		} else {
			res.Lat = append(res.Lat, int64(d))
		}
		lens = append(lens, len(got)-len(strconv.Itoa(req.id)))
	}
	for i, l := range lens {
		if l != lens[0] {
			return fmt.Errorf("read %d: %d bytes, the first %d", i, l, lens[0])
		}
	}
	return nil
}

func (a *agent) writes(path string, n int, res *result) error {
	req, err := a.readRequest(path, 0, 0)
	if err != nil {
		return err
	}
	got, err := a.roundTrip(req)
	if err != nil {
		return err
	}
	text, err := content(got)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 110 {
		return fmt.Errorf("%s has %d lines; write needs at least 110", path, len(lines))
	}
	res.Bytes = len(text)
	// Two versions of lines 101-103, alternating: every write changes
	// three lines, whatever the file held when the prompt began (an edit
	// and its revert made every write after an odd count a no-op).
	first := 0
	if lines[100] == benchEdit(0, 0) {
		first = 1
	}
	for i := 0; i < n; i++ {
		for k := 0; k < 3; k++ {
			lines[100+k] = benchEdit((first+i)%2, k)
		}
		req, err := a.encode("fs/write_text_file", struct {
			SessionID string `json:"sessionId"`
			Path      string `json:"path"`
			Content   string `json:"content"`
		}{a.sid, path, strings.Join(lines, "")})
		if err != nil {
			return err
		}
		t0 := time.Now()
		_, err = a.roundTrip(req)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		res.Lat = append(res.Lat, int64(d))
	}
	return nil
}

// benchEdit is version v (0 or 1) of line 101+k as the write case edits it.
func benchEdit(v, k int) string {
	return fmt.Sprintf("edited by the bench agent (%c), line %d\n", "ab"[v], 101+k)
}
