package acpx

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
)

// ACP v2 (the draft schema of @agentclientprotocol/sdk 2.4.0,
// schema/v2): what acp-go-sdk v0.13 (v1 only) lacks, read and written by
// hand. The host offers v2 only where the user asks (protocol.version =
// 2); an agent answering 1 is spoken to in v1 as before.
//
// v2 drops the client's fs and terminal methods (the editor's MCP server
// serves reads, writes and commands), has the agent own its terminals
// (display-only: terminal_update, terminal_output_chunk), lets the client
// cancel one tool call or terminal (tool_call/cancel, terminal/cancel,
// where the agent advertises it on the item), answers session/prompt as
// soon as the prompt is inserted (the turn's end is a state_update to
// idle), and reports background work that outlives a turn (state_update's
// background list).
//
// V2Session translates a v2 session's updates into the v1 shapes the host
// and the chat already render, so the rest of the client has one model.
const (
	ProtocolV1 = 1
	ProtocolV2 = 2

	MethodTerminalCancel = "terminal/cancel"
	MethodToolCallCancel = "tool_call/cancel"
	MethodAuthLogin      = "auth/login"
	MethodAuthLogout     = "auth/logout"

	UpdateStateV2          = "state_update"
	UpdateTerminalV2       = "terminal_update"
	UpdateTerminalOutputV2 = "terminal_output_chunk"
	UpdateToolContentV2    = "tool_call_content_chunk"

	// AppendKey marks a translated tool_call_update whose content is to be
	// appended to the tool call's content shown so far (a
	// tool_call_content_chunk), not to replace it: the chat (Lua) reads it.
	AppendKey = "_acp_append"
	// SnapshotKey marks a terminal_output meta that replaces the output
	// shown so far (a terminal_update's output after streamed chunks).
	SnapshotKey = "replace"
)

// InitializeV2Request is v2's initialize params.
type InitializeV2Request struct {
	ProtocolVersion int            `json:"protocolVersion"`
	Info            Implementation `json:"info"`
	Capabilities    map[string]any `json:"capabilities"`
}

// Implementation is v2's info (name and version required).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ResponseVersion is the protocolVersion of an initialize response (a
// number, or ZeptoClaw's number in a string); 0 when absent.
func ResponseVersion(raw json.RawMessage) int {
	var r struct {
		V json.RawMessage `json:"protocolVersion"`
	}
	if json.Unmarshal(raw, &r) != nil || len(r.V) == 0 {
		return 0
	}
	var n int
	if json.Unmarshal(r.V, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(r.V, &s) == nil {
		_, _ = fmt.Sscanf(s, "%d", &n)
	}
	return n
}

// V2InitializeAsV1 reads a v2 initialize response in the v1 shape the host
// reads (agentInfo, agentCapabilities with promptCapabilities,
// mcpCapabilities and sessionCapabilities, authMethods): v2 moved prompt
// and MCP capabilities under capabilities.session and made its flags
// objects ({} for supported).
func V2InitializeAsV1(raw json.RawMessage) (json.RawMessage, error) {
	var r struct {
		ProtocolVersion int             `json:"protocolVersion"`
		Info            json.RawMessage `json:"info"`
		Capabilities    struct {
			Session map[string]json.RawMessage `json:"session"`
			Auth    json.RawMessage            `json:"auth"`
			Meta    json.RawMessage            `json:"_meta"`
			// Providers: providers/* (as in v1, at the top).
			Providers json.RawMessage `json:"providers"`
		} `json:"capabilities"`
		AuthMethods json.RawMessage `json:"authMethods"`
		Meta        json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("v2 initialize response: %w", err)
	}
	flags := func(v json.RawMessage) map[string]bool {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(v, &m)
		out := map[string]bool{}
		for k, x := range m {
			if k != "_meta" && isObject(x) {
				out[k] = true
			}
		}
		return out
	}
	// v2's baseline: session/list, session/resume and session/close need
	// no capability; auth/logout comes with auth methods.
	session := map[string]json.RawMessage{"list": json.RawMessage("{}"), "resume": json.RawMessage("{}"),
		"close": json.RawMessage("{}")}
	caps := map[string]any{"loadSession": false}
	for k, v := range r.Capabilities.Session {
		switch k {
		case "prompt":
			caps["promptCapabilities"] = flags(v)
		case "mcp":
			caps["mcpCapabilities"] = flags(v)
		default:
			if isObject(v) {
				session[k] = v
			}
		}
	}
	caps["sessionCapabilities"] = session
	auth := map[string]json.RawMessage{}
	_ = json.Unmarshal(r.Capabilities.Auth, &auth)
	var methods []json.RawMessage
	if json.Unmarshal(r.AuthMethods, &methods) == nil && len(methods) > 0 {
		auth["logout"] = json.RawMessage("{}")
	}
	if len(auth) > 0 {
		caps["auth"] = auth
	}
	if isObject(r.Capabilities.Meta) {
		caps["_meta"] = r.Capabilities.Meta
	}
	if isObject(r.Capabilities.Providers) {
		caps["providers"] = r.Capabilities.Providers
	}
	out := map[string]any{"protocolVersion": r.ProtocolVersion, "agentCapabilities": caps}
	if isObject(r.Info) {
		out["agentInfo"] = r.Info
	}
	if len(r.AuthMethods) > 0 {
		out["authMethods"] = r.AuthMethods
	}
	if isObject(r.Meta) {
		out["_meta"] = r.Meta
	}
	return json.Marshal(out)
}

// V2PermissionAsV1 reads v2 session/request_permission params in v1's
// shape: v2 says what is asked as a subject (a tool call, or a command
// with its cwd) beside a title; v1 as a tool call.
func V2PermissionAsV1(params json.RawMessage) json.RawMessage {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	if _, ok := p["toolCall"]; ok {
		return params
	}
	title, _ := p["title"].(string)
	tc := map[string]any{}
	subject, _ := p["subject"].(map[string]any)
	switch subject["type"] {
	case "tool_call":
		if t, ok := subject["toolCall"].(map[string]any); ok {
			tc = t
		}
	case "command":
		cmd, _ := subject["command"].(string)
		tc["kind"] = "execute"
		tc["rawInput"] = map[string]any{"command": cmd, "cwd": subject["cwd"]}
		if id, ok := subject["toolCallId"].(string); ok {
			tc["toolCallId"] = id
		} else if id, ok := subject["terminalId"].(string); ok {
			tc["toolCallId"] = id
		}
		if title == "" {
			title = cmd
		}
	}
	if _, ok := tc["toolCallId"].(string); !ok {
		tc["toolCallId"] = "permission"
	}
	if _, ok := tc["title"].(string); !ok && title != "" {
		tc["title"] = title
	}
	p["toolCall"] = tc
	delete(p, "subject")
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}

// Background is one piece of work the agent runs beyond the foreground
// turn (a state_update's background list).
type Background struct {
	Type  string `msgpack:"type"`  // terminal, tool_call, subagent, or what the agent says
	ID    string `msgpack:"id"`    // its terminal, tool call or session id
	Title string `msgpack:"title"` // what it is, as far as known (a command, a title)
}

// State is a state_update: the session's foreground state.
type State struct {
	State      string // running, idle, requires_action, unknown, or another
	StopReason string // idle's, when reported
	Usage      map[string]any
	// Background: the snapshot of background work, when reported
	// (HasBackground).
	Background    []Background
	HasBackground bool
}

// V2Out is what one v2 update becomes.
type V2Out struct {
	Updates []map[string]any // v1-shaped updates to render
	State   *State           // a state_update
}

// V2Session is one v2 session's translation state: the tool calls and
// terminals seen so far. Not safe for concurrent use (a session's updates
// come one at a time).
type V2Session struct {
	tools map[string]*v2Tool
	terms map[string]*v2Term
}

type v2Tool struct {
	title     string
	content   []any
	cancel    bool
	terminals []string
	final     bool
}

type v2Term struct {
	owner   string // the tool call showing it
	command string
	cancel  bool
	exited  bool
	fed     bool
}

// maxV2Items bounds the tool calls and terminals remembered per session;
// past it the oldest finished ones are forgotten.
const maxV2Items = 4096

// NewV2Session returns an empty translation state.
func NewV2Session() *V2Session {
	return &V2Session{tools: map[string]*v2Tool{}, terms: map[string]*v2Term{}}
}

var wholeMessage = map[string]string{
	"user_message": "user_message_chunk", "agent_message": "agent_message_chunk", "agent_thought": "agent_thought_chunk",
}

// Translate turns one v2 update (the update object of a session/update)
// into v1-shaped updates and, for a state_update, the state.
func (v *V2Session) Translate(u map[string]any) V2Out {
	kind, _ := u["sessionUpdate"].(string)
	switch kind {
	case "user_message", "agent_message", "agent_thought":
		var out V2Out
		blocks, _ := u["content"].([]any)
		for _, b := range blocks {
			if bm, ok := b.(map[string]any); ok {
				c := map[string]any{"sessionUpdate": wholeMessage[kind], "content": bm}
				if id, ok := u["messageId"]; ok {
					c["messageId"] = id
				}
				out.Updates = append(out.Updates, c)
			}
		}
		return out
	case UpdateStateV2:
		st := ParseState(u)
		return V2Out{State: &st}
	case "tool_call_update":
		return V2Out{Updates: v.tool(u)}
	case UpdateToolContentV2:
		id, _ := u["toolCallId"].(string)
		c, ok := u["content"].(map[string]any)
		if id == "" || !ok {
			return V2Out{}
		}
		t := v.tools[id]
		if t == nil {
			return V2Out{Updates: v.tool(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "content": []any{c}})}
		}
		// Only the chunk goes on (AppendKey): re-sending the whole content
		// per chunk made a long stream on one tool call quadratic.
		t.content = append(t.content, c)
		v.noteTerminals(id, t, []any{c})
		return V2Out{Updates: []map[string]any{{
			"sessionUpdate": "tool_call_update", "toolCallId": id, "content": []any{c}, AppendKey: true,
		}}}
	case UpdateTerminalV2:
		return V2Out{Updates: v.terminal(u)}
	case UpdateTerminalOutputV2:
		return V2Out{Updates: v.output(u)}
	}
	return V2Out{Updates: []map[string]any{u}}
}

// tool is a tool_call_update: a tool call first seen becomes a tool_call.
func (v *V2Session) tool(u map[string]any) []map[string]any {
	id, _ := u["toolCallId"].(string)
	if id == "" {
		return nil
	}
	t := v.tools[id]
	out := map[string]any{}
	for k, x := range u {
		out[k] = x
	}
	if t == nil {
		v.prune()
		t = &v2Tool{}
		v.tools[id] = t
		out["sessionUpdate"] = "tool_call"
		if _, ok := out["title"].(string); !ok {
			out["title"] = id
		}
		if _, ok := out["status"].(string); !ok {
			out["status"] = "pending"
		}
	}
	if s, ok := u["title"].(string); ok {
		t.title = s
	}
	if c, ok := u["capabilities"]; ok {
		cm, _ := c.(map[string]any)
		_, t.cancel = cm["cancel"].(map[string]any)
	}
	switch u["status"] {
	case "completed", "failed", "cancelled":
		t.final = true
	}
	if content, ok := u["content"].([]any); ok {
		t.content = content
		v.noteTerminals(id, t, content)
	} else if _, ok := u["content"]; ok { // null clears
		t.content = nil
	}
	return []map[string]any{out}
}

// noteTerminals records the terminals content (of tool call id) shows.
func (v *V2Session) noteTerminals(id string, t *v2Tool, content []any) {
	for _, c := range content {
		if cm, ok := c.(map[string]any); ok && cm["type"] == "terminal" {
			if tid, ok := cm["terminalId"].(string); ok && tid != "" {
				t.terminals = appendOnce(t.terminals, tid)
				term := v.terms[tid]
				if term == nil {
					term = &v2Term{}
					v.terms[tid] = term
				}
				if term.owner == "" || term.owner == tid {
					term.owner = id
				}
			}
		}
	}
}

func appendOnce(s []string, x string) []string {
	for _, y := range s {
		if y == x {
			return s
		}
	}
	return append(s, x)
}

// owner is the tool call showing terminal id; for a terminal no tool call
// references, a tool call of its own (its id the terminal's) is made.
func (v *V2Session) owner(id string, t *v2Term) (string, []map[string]any) {
	if t.owner != "" {
		return t.owner, nil
	}
	t.owner = id
	title := t.command
	if title == "" {
		title = "terminal " + id
	}
	tc := &v2Tool{title: title, terminals: []string{id}, content: []any{map[string]any{"type": "terminal", "terminalId": id}}}
	v.tools[id] = tc
	return id, []map[string]any{{
		"sessionUpdate": "tool_call", "toolCallId": id, "title": title, "kind": "execute", "status": "in_progress",
		"content": tc.content,
	}}
}

// terminal is a terminal_update: its command, cwd and exit are shown as
// the agent-run terminal meta (terminal_info, terminal_exit) of the tool
// call showing it, as agents that run commands themselves send in v1.
func (v *V2Session) terminal(u map[string]any) []map[string]any {
	id, _ := u["terminalId"].(string)
	if id == "" {
		return nil
	}
	t := v.terms[id]
	if t == nil {
		v.prune()
		t = &v2Term{}
		v.terms[id] = t
	}
	if s, ok := u["command"].(string); ok {
		t.command = s
	}
	if c, ok := u["capabilities"]; ok {
		cm, _ := c.(map[string]any)
		_, t.cancel = cm["cancel"].(map[string]any)
	}
	owner, out := v.owner(id, t)
	meta := map[string]any{}
	info := map[string]any{"terminal_id": id}
	if s, ok := u["cwd"].(string); ok {
		info["cwd"] = s
	}
	if t.command != "" {
		info["command"] = t.command
	}
	meta["terminal_info"] = info
	if o, ok := u["output"].(map[string]any); ok {
		// A snapshot of the whole output: after streamed chunks it
		// replaces what they showed (SnapshotKey), not appended to it.
		if data, ok := decode64(o["data"]); ok {
			out := map[string]any{"terminal_id": id, "data": data}
			if t.fed {
				out[SnapshotKey] = true
			}
			if data != "" || t.fed {
				meta["terminal_output"] = out
			}
			t.fed = t.fed || data != ""
		}
	}
	up := map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": owner}
	if ex, ok := u["exitStatus"].(map[string]any); ok && !t.exited {
		t.exited = true
		t.cancel = false
		exit := map[string]any{"terminal_id": id}
		if n, ok := ex["exitCode"].(float64); ok {
			exit["exit_code"] = n
		}
		if s, ok := ex["signal"].(string); ok {
			exit["signal"] = s
		}
		meta["terminal_exit"] = exit
		if owner == id { // its own tool call ends with it
			up["status"] = "completed"
			if n, ok := ex["exitCode"].(float64); (ok && n != 0) || ex["signal"] != nil {
				up["status"] = "failed"
			}
			v.tools[id].final = true
		}
	}
	up["_meta"] = meta
	return append(out, up)
}

// output is a terminal_output_chunk: base64 bytes appended to the
// terminal, shown as terminal_output_delta meta.
func (v *V2Session) output(u map[string]any) []map[string]any {
	id, _ := u["terminalId"].(string)
	data, ok := decode64(u["data"])
	if id == "" || !ok {
		return nil
	}
	t := v.terms[id]
	if t == nil {
		v.prune()
		t = &v2Term{}
		v.terms[id] = t
	}
	t.fed = true
	owner, out := v.owner(id, t)
	return append(out, map[string]any{
		"sessionUpdate": "tool_call_update", "toolCallId": owner,
		"_meta": map[string]any{"terminal_output_delta": map[string]any{"terminal_id": id, "data": data}},
	})
}

func decode64(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// prune forgets the oldest finished items past maxV2Items (map order: any
// finished ones).
func (v *V2Session) prune() {
	if len(v.tools)+len(v.terms) < maxV2Items {
		return
	}
	for id, t := range v.tools {
		if t.final {
			delete(v.tools, id)
		}
	}
	for id, t := range v.terms {
		if t.exited {
			delete(v.terms, id)
		}
	}
}

// Cancel is how the client may cancel the item id (a tool call or a
// terminal): the method and params to send, or "" when the agent does
// not let it be cancelled. A tool call whose own cancel is not offered is
// cancelled through a cancellable terminal it shows.
func (v *V2Session) Cancel(sessionID, id string) (method string, params map[string]any) {
	if t := v.tools[id]; t != nil && t.cancel && !t.final {
		return MethodToolCallCancel, map[string]any{"sessionId": sessionID, "toolCallId": id}
	}
	if t := v.terms[id]; t != nil && t.cancel && !t.exited {
		return MethodTerminalCancel, map[string]any{"sessionId": sessionID, "terminalId": id}
	}
	if t := v.tools[id]; t != nil {
		for _, tid := range t.terminals {
			if term := v.terms[tid]; term != nil && term.cancel && !term.exited {
				return MethodTerminalCancel, map[string]any{"sessionId": sessionID, "terminalId": tid}
			}
		}
	}
	return "", nil
}

// Title is what the item id is, as far as the session knows.
func (v *V2Session) Title(id string) string {
	if t := v.terms[id]; t != nil && t.command != "" {
		return t.command
	}
	if t := v.tools[id]; t != nil && t.title != "" {
		return t.title
	}
	return id
}

// ParseState reads a state_update. A malformed background list is not
// reported, as the schema says.
func ParseState(u map[string]any) State {
	st := State{}
	st.State, _ = u["state"].(string)
	if st.State == "idle" {
		st.StopReason, _ = u["stopReason"].(string)
		st.Usage, _ = u["usage"].(map[string]any)
	}
	if bg, ok := u["background"].([]any); ok {
		st.HasBackground = true
		for _, b := range bg {
			bm, ok := b.(map[string]any)
			if !ok {
				continue
			}
			item := Background{}
			item.Type, _ = bm["type"].(string)
			for _, k := range []string{"terminalId", "toolCallId", "sessionId"} {
				if s, ok := bm[k].(string); ok {
					item.ID = s
					break
				}
			}
			if item.Type == "" {
				continue
			}
			st.Background = append(st.Background, item)
		}
		sort.SliceStable(st.Background, func(i, j int) bool { return st.Background[i].ID < st.Background[j].ID })
	}
	return st
}
