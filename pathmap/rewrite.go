package pathmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// Rewriter translates the path fields of the ACP messages that carry
// them, in both directions, at one place: the connection to the agent
// (transport.WithFilter). What reaches the host is local; what reaches the
// agent is the agent's. A path that cannot be translated is refused:
//
//   - a request of the agent's naming one (fs/*, terminal/create's cwd) is
//     answered with an error at once and never reaches the host;
//   - a request of the client's (session/new's cwd, an @file in a prompt)
//     is answered with an error at once and never reaches the agent;
//   - in what is only shown (tool call locations and diffs), it is left
//     out, saying so.
//
// MCP servers' commands and arguments are translated when they are paths
// under a local root; other values name programs of the agent's machine
// and are left as they are.
type Rewriter struct {
	m *Map

	mu      sync.Mutex
	pending map[string]string // the client's requests whose responses carry paths: id -> method
}

// NewRewriter returns the rewriter of m.
func NewRewriter(m *Map) *Rewriter {
	return &Rewriter{m: m, pending: map[string]string{}}
}

// Map is the rewriter's map.
func (r *Rewriter) Map() *Map { return r.m }

// message is a JSON-RPC message with its params decoded one level.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// The methods whose messages carry paths.
var (
	agentRequests = map[string]bool{ // agent -> client requests
		"fs/read_text_file": true, "fs/write_text_file": true, "terminal/create": true,
		"session/request_permission": true,
	}
	clientRequests = map[string]bool{ // client -> agent requests
		"session/new": true, "session/load": true, "session/resume": true, "session/list": true,
		"session/fork": true, "session/prompt": true,
	}
)

// methodOf finds the method of msg cheaply: the value of a "method" key
// in its first 256 bytes, as every JSON-RPC encoder writes it; "" when
// there is none there.
func methodOf(msg []byte) string {
	head := msg[:min(len(msg), 256)]
	i := bytes.Index(head, []byte(`"method"`))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(head[i+len(`"method"`):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return ""
	}
	return string(rest[1 : end+1])
}

// Inbound implements transport.Filter: a message from the agent.
func (r *Rewriter) Inbound(msg []byte) (pass, reply []byte) {
	method := methodOf(msg)
	switch {
	case method == "session/update":
		if !bytes.Contains(msg, []byte(`"tool_call`)) {
			return msg, nil
		}
	case agentRequests[method]:
	case method != "":
		return msg, nil
	default:
		r.mu.Lock()
		n := len(r.pending)
		r.mu.Unlock()
		if n == 0 {
			return msg, nil
		}
	}
	var m message
	if err := json.Unmarshal(msg, &m); err != nil {
		return msg, nil // not JSON-RPC: the host reports it
	}
	if m.Method == "" {
		return r.response(msg, m), nil
	}
	params, err := object(m.Params)
	if err != nil {
		return msg, nil
	}
	var perr error
	switch m.Method {
	case "fs/read_text_file", "fs/write_text_file":
		perr = r.field(params, "path", r.m.ToLocal, true)
	case "terminal/create":
		perr = r.field(params, "cwd", r.m.ToLocal, false)
	case "session/request_permission":
		if tc, err := object(params["toolCall"]); err == nil {
			r.toolCall(tc)
			params["toolCall"] = encode(tc)
		}
	case "session/update":
		if u, err := object(params["update"]); err == nil {
			r.toolCall(u)
			params["update"] = encode(u)
		}
	}
	if perr != nil {
		if m.ID == nil {
			return nil, nil
		}
		return nil, errorResponse(m.ID, perr)
	}
	m.Params = encode(params)
	return encode(m), nil
}

// response translates the response to a client's request that carries
// paths (session/list's sessions).
func (r *Rewriter) response(msg []byte, m message) []byte {
	key := string(bytes.TrimSpace(m.ID))
	r.mu.Lock()
	method := r.pending[key]
	delete(r.pending, key)
	r.mu.Unlock()
	if method != "session/list" || m.Result == nil {
		return msg
	}
	res, err := object(m.Result)
	if err != nil {
		return msg
	}
	var sessions []map[string]json.RawMessage
	if json.Unmarshal(res["sessions"], &sessions) != nil {
		return msg
	}
	kept := sessions[:0]
	for _, s := range sessions {
		// A session of another directory than the mapped ones is not
		// one the user can resume here.
		if r.field(s, "cwd", r.m.ToLocal, false) == nil {
			kept = append(kept, s)
		}
	}
	res["sessions"] = encode(kept)
	m.Result = encode(res)
	return encode(m)
}

// Outbound implements transport.Filter: a message to the agent.
func (r *Rewriter) Outbound(msg []byte) (pass, reply []byte) {
	method := methodOf(msg)
	if !clientRequests[method] {
		return msg, nil
	}
	var m message
	if err := json.Unmarshal(msg, &m); err != nil {
		return msg, nil
	}
	params, err := object(m.Params)
	if err != nil {
		return msg, nil
	}
	var perr error
	switch m.Method {
	case "session/new", "session/load", "session/resume", "session/fork":
		perr = r.field(params, "cwd", r.m.ToAgent, m.Method != "session/fork")
		if perr == nil {
			perr = r.dirs(params)
		}
		if perr == nil {
			perr = r.mcpServers(params)
		}
	case "session/list":
		perr = r.field(params, "cwd", r.m.ToAgent, false)
		if perr == nil && m.ID != nil {
			r.mu.Lock()
			r.pending[string(bytes.TrimSpace(m.ID))] = m.Method
			r.mu.Unlock()
		}
	case "session/prompt":
		perr = r.prompt(params)
	}
	if perr != nil {
		if m.ID == nil {
			return nil, nil
		}
		return nil, errorResponse(m.ID, perr)
	}
	m.Params = encode(params)
	return encode(m), nil
}

// field translates the string field key of o with f; a missing field is
// an error when required.
func (r *Rewriter) field(o map[string]json.RawMessage, key string, f func(string) (string, error), required bool) error {
	raw, ok := o[key]
	if !ok || string(raw) == "null" {
		if required {
			return fmt.Errorf("no %s", key)
		}
		return nil
	}
	if at := jsontext.InvalidText(raw); at >= 0 {
		// encoding/json would put U+FFFD there: another path than sent.
		return fmt.Errorf("%s is not valid UTF-8 (byte %d of it): nothing was read or written", key, at)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	t, err := f(s)
	if err != nil {
		return fmt.Errorf("path_map: %s: %w", key, err)
	}
	o[key] = encode(t)
	return nil
}

// dirs translates additionalDirectories.
func (r *Rewriter) dirs(params map[string]json.RawMessage) error {
	raw, ok := params["additionalDirectories"]
	if !ok {
		return nil
	}
	var dirs []string
	if json.Unmarshal(raw, &dirs) != nil {
		return nil
	}
	for i, d := range dirs {
		t, err := r.m.ToAgent(d)
		if err != nil {
			return fmt.Errorf("path_map: additionalDirectories: %w", err)
		}
		dirs[i] = t
	}
	params["additionalDirectories"] = encode(dirs)
	return nil
}

// mcpServers translates the paths of stdio MCP servers: a command or
// argument that is an absolute path under a local root.
func (r *Rewriter) mcpServers(params map[string]json.RawMessage) error {
	raw, ok := params["mcpServers"]
	if !ok {
		return nil
	}
	var servers []map[string]json.RawMessage
	if json.Unmarshal(raw, &servers) != nil {
		return nil
	}
	mapped := func(s string) string {
		if !filepath.IsAbs(s) {
			return s
		}
		if t, err := r.m.ToAgent(s); err == nil {
			return t
		}
		return s
	}
	for _, srv := range servers {
		var cmd string
		if json.Unmarshal(srv["command"], &cmd) == nil && cmd != "" {
			srv["command"] = encode(mapped(cmd))
		}
		var args []string
		if json.Unmarshal(srv["args"], &args) == nil {
			for i, a := range args {
				args[i] = mapped(a)
			}
			srv["args"] = encode(args)
		}
	}
	params["mcpServers"] = encode(servers)
	return nil
}

// prompt translates the file URIs of a prompt's context blocks.
func (r *Rewriter) prompt(params map[string]json.RawMessage) error {
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(params["prompt"], &blocks) != nil {
		return nil
	}
	for _, b := range blocks {
		if err := r.field(b, "uri", r.m.URIToAgent, false); err != nil {
			return fmt.Errorf("context: %w", err)
		}
		if res, err := object(b["resource"]); err == nil {
			if err := r.field(res, "uri", r.m.URIToAgent, false); err != nil {
				return fmt.Errorf("context: %w", err)
			}
			b["resource"] = encode(res)
		}
	}
	params["prompt"] = encode(blocks)
	return nil
}

// toolCall translates a tool call's (or tool call update's) locations and
// diffs; those under no root are left out, a diff replaced by a line
// saying so.
func (r *Rewriter) toolCall(tc map[string]json.RawMessage) {
	var locs []map[string]json.RawMessage
	if json.Unmarshal(tc["locations"], &locs) == nil && locs != nil {
		kept := locs[:0]
		for _, l := range locs {
			if r.field(l, "path", r.m.ToLocal, true) == nil {
				kept = append(kept, l)
			}
		}
		tc["locations"] = encode(kept)
	}
	var content []map[string]json.RawMessage
	if json.Unmarshal(tc["content"], &content) == nil && content != nil {
		for i, c := range content {
			if string(c["type"]) != `"diff"` {
				continue
			}
			var p string
			_ = json.Unmarshal(c["path"], &p)
			if err := r.field(c, "path", r.m.ToLocal, true); err != nil {
				content[i] = map[string]json.RawMessage{
					"type": encode("content"),
					"content": encode(map[string]string{"type": "text",
						"text": fmt.Sprintf("(a change to %s, which is outside every mapped root: not shown)", p)}),
				}
			}
		}
		tc["content"] = encode(content)
	}
}

// object decodes a JSON object one level.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(raw, &o); err != nil {
		return nil, err
	}
	if o == nil {
		return nil, fmt.Errorf("not an object")
	}
	return o, nil
}

func encode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// errorResponse is the error answering request id: invalid params.
func errorResponse(id json.RawMessage, err error) []byte {
	return encode(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32602, "message": err.Error()}})
}
