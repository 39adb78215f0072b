// Package wirelog records what the host says to agents, for the e2e
// suite's schema check (internal/acpschema): with $NVIM_ACP_WIRE_LOG set
// to a directory, each agent connection writes one file there, a JSON
// object per line:
//
//	{"agent":"name"}                      first, once
//	{"out":<message>}                     a JSON-RPC message the host sent
//	{"in":{"id":<id>,"method":"m"}}       a request the agent sent (what a response answers)
//	{"version":N}                         the protocol version an initialize answer negotiated
//
// Off (the variable unset, as for every user), nothing is recorded and
// nothing costs: a nil *Recorder does nothing.
package wirelog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// Env names the directory recorded into.
const Env = "NVIM_ACP_WIRE_LOG"

var seq atomic.Int64

// Recorder records one agent connection. Its methods are safe for
// concurrent use; on a nil Recorder they do nothing.
type Recorder struct {
	mu  sync.Mutex
	f   *os.File
	buf []byte
}

// Open starts the record of a connection to agent in $NVIM_ACP_WIRE_LOG:
// nil when it is unset, or when the file cannot be made (then it says why
// on stderr, which the host logs: a test then finds nothing recorded).
func Open(agent string) *Recorder {
	dir := os.Getenv(Env)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "wirelog: %v\n", err)
		return nil
	}
	name := filepath.Join(dir, fmt.Sprintf("%d-%d.jsonl", os.Getpid(), seq.Add(1)))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "wirelog: %v\n", err)
		return nil
	}
	r := &Recorder{f: f}
	head, _ := json.Marshal(map[string]string{"agent": agent})
	r.line(head)
	return r
}

// Out records msg, one whole JSON-RPC message the host sent (a trailing
// newline is dropped).
func (r *Recorder) Out(msg []byte) {
	if r == nil {
		return
	}
	msg = bytes.TrimRight(msg, "\r\n")
	if len(msg) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf = append(append(append(r.buf[:0], `{"out":`...), msg...), "}\n"...)
	_, _ = r.f.Write(r.buf)
}

// In records the id and method of line when it is a request from the
// agent, and the protocol version an initialize answer negotiates (what
// the client says from then on is checked against that version's schema);
// anything else it reads is not kept.
func (r *Recorder) In(line []byte) {
	if r == nil {
		return
	}
	if !bytes.Contains(line, []byte(`"method"`)) {
		r.version(line)
		return
	}
	if !bytes.Contains(line, []byte(`"id"`)) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || m.Method == "" {
		return
	}
	b, _ := json.Marshal(map[string]any{"in": map[string]any{"id": m.ID, "method": m.Method}})
	r.line(b)
}

// version records {"version":N} for an initialize answer (a result with
// a numeric protocolVersion).
func (r *Recorder) version(line []byte) {
	if !bytes.Contains(line, []byte(`"protocolVersion"`)) || !bytes.Contains(line, []byte(`"result"`)) {
		return
	}
	var m struct {
		Result struct {
			ProtocolVersion json.RawMessage `json:"protocolVersion"`
		} `json:"result"`
	}
	var v int
	if json.Unmarshal(line, &m) != nil || json.Unmarshal(m.Result.ProtocolVersion, &v) != nil || v <= 0 {
		return
	}
	b, _ := json.Marshal(map[string]int{"version": v})
	r.line(b)
}

func (r *Recorder) line(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = r.f.Write(append(b, '\n'))
}

// Close ends the record.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.f.Close()
}
