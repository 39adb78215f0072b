// Package player plays fakeagent's scenarios (testdata/fakeagent): a
// scriptable ACP agent for nvim-acp's tests, what to answer to initialize
// and session/new, and for each prompt a list of steps: send updates, send
// requests to the client, wait for cancel, crash, hang, write garbage.
// Everything it receives is logged as JSON lines. The fakeagent command
// plays one on its stdio; testdata/fakeserver can play them in its own
// process (no agent process between the server and the scenario).
package player

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Scenario is the script the agent plays.
type Scenario struct {
	Initialize map[string]any `json:"initialize"`
	NewSession struct {
		Result map[string]any    `json:"result"`
		Error  *acp.RequestError `json:"error"`
		Steps  []Step            `json:"steps"`  // run after session/new answers
		Hang   bool              `json:"hang"`   // session/new is never answered
		Before []Step            `json:"before"` // run before session/new answers (its id known)
		// AtOnce runs as soon as session/new's answer is written (Steps
		// wait 20 ms): auggie asks a permission in that very millisecond.
		AtOnce []Step `json:"at_once"`
	} `json:"new_session"`
	Turns [][]Step `json:"turns"` // turn i answers the i-th prompt; the last repeats
	// Sessions answers session/list; LoadSteps replay a session's history on session/load.
	Sessions  []map[string]any `json:"sessions"`
	LoadSteps []Step           `json:"load_steps"`
	// SessionPages answers session/list page by page (cursors "page-1"...),
	// instead of Sessions.
	SessionPages [][]map[string]any `json:"session_pages"`
	// AttachSteps run after session/new, session/load, session/resume and
	// session/fork answer (e.g. an exit: a crash right after).
	AttachSteps []Step `json:"attach_steps"`
	// StrictSessions: session/prompt naming a session this process did
	// not create, load or resume is answered -32002, as claude-agent-acp
	// and codex-acp answer.
	StrictSessions bool `json:"strict_sessions"`
	// MethodSteps run before a request of the method is answered (its
	// sessionId, if any, is the steps'), e.g. a wait_file holding the
	// answer until the test says.
	MethodSteps map[string][]Step `json:"method_steps"`
	// Fail makes these methods answer an error (session/resume, session/load...).
	Fail map[string]*acp.RequestError `json:"fail"`
	// SetMode, when set, is sent as current_mode_update after session/set_mode.
	EchoMode bool `json:"echo_mode"`
	// ConfigOptions answer session/set_config_option (default: none).
	ConfigOptions []any `json:"config_options"`
	// Usage goes with each session/prompt answer (PromptResponse.usage).
	Usage map[string]any `json:"usage"`
	// SessionStatus answers session/status (default "saved"; Fail makes it
	// an error). AuthStatus answers auth/status (default state "unknown").
	SessionStatus string         `json:"session_status"`
	AuthStatus    map[string]any `json:"auth_status"`
	// QueuePrompts: a session/prompt sent while a turn runs waits for it
	// (claude's promptQueueing); else turns run at once, side by side.
	QueuePrompts bool `json:"queue_prompts"`
	// SteerOutcome answers every `_session/steering` with this outcome;
	// by default "injected" while a turn runs (its wait_steer step goes on)
	// and "promptRequired" when none does.
	SteerOutcome string `json:"steer_outcome"`
	// LogWire logs every line received, in arrival order, as "wire" events
	// (method, id, error code, permission outcome).
	LogWire bool `json:"log_wire"`
	// InitHang: initialize is never answered. InitRaw: written instead of
	// the answer to initialize ("$id" becomes the request's id), which is
	// then never answered properly.
	InitHang bool   `json:"init_hang"`
	InitRaw  string `json:"init_raw"`
	// FrameOutput: every message is written with Content-Length framing,
	// whatever the client sends.
	FrameOutput bool `json:"frame_output"`
	// IgnoreSignals: the agent ignores SIGTERM, SIGINT and SIGHUP.
	IgnoreSignals bool `json:"ignore_signals"`
	// Start steps run as soon as the agent starts (before initialize).
	Start []Step `json:"start"`
	// Auth makes session/new need a login (see authenticate).
	Auth struct {
		// Required: session/new fails "Authentication required" until
		// authenticate succeeded on this process, or File exists.
		Required bool `json:"required"`
		// Env: authenticate succeeds only with this variable set in the
		// agent's environment (to Value, when given).
		Env   string `json:"env"`
		Value string `json:"value"`
		// File: a terminal login ("fakeagent login FILE") wrote it.
		File string `json:"file"`
		// Error: authenticate answers it.
		Error *acp.RequestError `json:"error"`
		// Steps run during authenticate, before it answers, with no
		// session (codex-acp 2.6's ChatGPT login asks for a link with an
		// elicitation scoped to the authenticate request).
		Steps []Step `json:"steps"`
	} `json:"auth"`
}

// Step is one action of a turn; exactly one field is set.
type Step struct {
	Update map[string]any `json:"update,omitempty"`
	Text   string         `json:"text,omitempty"`
	// MessageID, with text: the chunk's messageId (as claude-agent-acp
	// and codex-acp send them); session/fork's AIR fork point must name
	// one sent on the session forked.
	MessageID string `json:"message_id,omitempty"`
	Chunks    int    `json:"chunks,omitempty"` // n agent_message_chunks "<prefix><i>\n"
	Prefix    string `json:"prefix,omitempty"`
	// With chunks: chunk i is Cycle[i % len(Cycle)] with "{i}" replaced by i
	// (instead of "<prefix><i>\n").
	Cycle []string `json:"cycle,omitempty"`
	// Mark logs {"event": "mark", "name": Mark, "session": <id>, "ns": <unix ns>} just before
	// the next step runs (benchmarks time what follows against it).
	Mark string `json:"mark,omitempty"`
	// Tools sends n tool_calls ("<prefix><i>", pending), then a
	// tool_call_update for each (completed, one line of output).
	Tools   int    `json:"tools,omitempty"`
	Request string `json:"request,omitempty"` // method of a request to the client
	Async   bool   `json:"async,omitempty"`   // with request: do not wait for the answer
	// Written, with async: go on once the request is written (not before).
	Written   bool           `json:"written,omitempty"`
	WaitAsync bool           `json:"wait_async,omitempty"` // wait for every async request's answer
	Params    map[string]any `json:"params,omitempty"`
	// RawParams, with request: the params as this JSON text ("$sessionId"
	// replaced), key order kept.
	RawParams  string `json:"raw_params,omitempty"`
	WaitCancel bool   `json:"wait_cancel,omitempty"`
	// WaitSteer waits for a `_session/steering` (or a cancel), then says
	// "steered: <its text>".
	WaitSteer bool   `json:"wait_steer,omitempty"`
	Exit      *int   `json:"exit,omitempty"`
	OnceFile  string `json:"once_file,omitempty"` // with exit: only when this file does not exist yet (then created)
	Hang      bool   `json:"hang,omitempty"`
	BigLine   int    `json:"big_line,omitempty"` // write one line of this many bytes
	Garbage   string `json:"garbage,omitempty"`
	SleepMS   int    `json:"sleep_ms,omitempty"`
	Stop      string `json:"stop,omitempty"` // ends the turn with this stop reason
	// With request: Save names the result's terminalId for later "$name"
	// params (the last one is always "$terminalId"); Until repeats the
	// request every 20 ms until its result or error (as JSON) contains the
	// string, for at most TimeoutMS (default 10000).
	Save      string            `json:"save,omitempty"`
	Until     string            `json:"until,omitempty"`
	TimeoutMS int               `json:"timeout_ms,omitempty"`
	Error     *acp.RequestError `json:"error,omitempty"` // ends the turn with this error
	// With request: Repeat sends it this many times in a row (each answer
	// logged), e.g. to race the client; with Async, all at once.
	Repeat int `json:"repeat,omitempty"`
	// Raw writes this text as is (a newline added), "$sessionId" replaced.
	Raw string `json:"raw,omitempty"`
	// RawBase64 is Raw given in base64: bytes a JSON scenario cannot hold
	// (invalid UTF-8).
	RawBase64 string `json:"raw_base64,omitempty"`
	// Notify sends a notification of this method with Params.
	Notify string `json:"notify,omitempty"`
	// Stderr writes this many bytes to stderr, in 100-byte lines.
	Stderr int `json:"stderr,omitempty"`
	// StderrText writes this line to stderr, ${VAR} replaced by the
	// agent's environment (an agent echoing its API key).
	StderrText string `json:"stderr_text,omitempty"`
	// Spawn starts a child of the agent (see sleeper) that writes its pid
	// to this file and sleeps; with Setsid in its own session, with
	// IgnoreSignals deaf to SIGTERM/SIGINT/SIGHUP; Orphan makes it a
	// grandchild whose parent exits at once.
	Spawn         string `json:"spawn,omitempty"`
	Setsid        bool   `json:"setsid,omitempty"`
	IgnoreSignals bool   `json:"ignore_signals,omitempty"`
	Orphan        bool   `json:"orphan,omitempty"`
	// Flood sends this many agent_message_chunks of FloodBytes bytes each
	// to session ids "<FloodSession>-<i mod 8>" (default: the turn's session).
	Flood        int    `json:"flood,omitempty"`
	FloodBytes   int    `json:"flood_bytes,omitempty"`
	FloodSession string `json:"flood_session,omitempty"`
	// WaitFile waits (up to 10 s, or TimeoutMS) until this file exists
	// and is not empty.
	WaitFile string `json:"wait_file,omitempty"`
	// Disk changes a file behind the client's back, as agents that edit
	// with their own tools do (claude-agent-acp, codex).
	Disk *DiskOp `json:"disk,omitempty"`
	// Sh runs a command line with sh -c in the agent's working directory,
	// as an agent's own shell tool does; its output is logged ("sh").
	Sh string `json:"sh,omitempty"`
	// EditLoop edits a file as an agent does, many times in a row: read it
	// (fs/read_text_file), think, write back what it read with one line
	// changed (fs/write_text_file).
	EditLoop *EditLoop `json:"edit_loop,omitempty"`
	// Session, with update, text or request: sent on this session id
	// instead of the turn's (a subagent's child session; "$sessionId"
	// replaced by the turn's).
	Session string `json:"session,omitempty"`
}

// EditLoop is Count rounds of: fs/read_text_file Path, sleep SleepMS, then
// fs/write_text_file Path with the text read, its 1-based line Line (1 by
// default) replaced by "<Text> <round>" (appended when the file is
// shorter). Each answer is logged as the request step's are.
type EditLoop struct {
	Path    string `json:"path"`
	Count   int    `json:"count"`
	SleepMS int    `json:"sleep_ms,omitempty"`
	Line    int    `json:"line,omitempty"`
	Text    string `json:"text,omitempty"`
	// Announce: before each write, a tool_call shows the edit as a diff
	// with the new text only (as claude adapters announce a Write), and a
	// tool_call_update completes it after the write.
	Announce bool `json:"announce,omitempty"`
}

// editLoop plays l in session sid.
func (a *agent) editLoop(ctx context.Context, sid string, l EditLoop) {
	line := max(l.Line, 1)
	text := l.Text
	if text == "" {
		text = "agent"
	}
	for i := 1; i <= l.Count && ctx.Err() == nil; i++ {
		read := Step{Request: acp.ClientMethodFsReadTextFile}
		res, rerr := a.call(ctx, read, map[string]any{"sessionId": sid, "path": l.Path})
		if rerr != nil {
			continue
		}
		var r struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(res, &r)
		time.Sleep(time.Duration(l.SleepMS) * time.Millisecond)
		lines := strings.SplitAfter(r.Content, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		mine := fmt.Sprintf("%s %d\n", text, i)
		if line <= len(lines) {
			lines[line-1] = mine
		} else {
			lines = append(lines, mine)
		}
		content := strings.Join(lines, "")
		id := fmt.Sprintf("edit-loop-%d", i)
		if l.Announce {
			a.notify(ctx, sid, map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Write " + l.Path,
				"kind": "edit", "status": "pending", "content": []any{map[string]any{"type": "diff", "path": l.Path, "newText": content}}})
		}
		write := Step{Request: acp.ClientMethodFsWriteTextFile}
		a.call(ctx, write, map[string]any{"sessionId": sid, "path": l.Path, "content": content})
		if l.Announce {
			a.notify(ctx, sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "completed"})
		}
	}
}

// DiskOp is a change of the disk made by the agent itself: Op "write"
// (Content to Path, in place, creating it), "replace" (Content to a
// temporary file renamed over Path), "delete" (Path) or "rename" (Path to
// To); or a read of it, "read" (Path, logged with its content).
type DiskOp struct {
	Op      string `json:"op"`
	Path    string `json:"path"`
	To      string `json:"to,omitempty"`
	Content string `json:"content,omitempty"`
}

// do applies op and logs it ("disk", with the error if any).
func (a *agent) do(op DiskOp) {
	var err error
	ev := map[string]any{"op": op.Op, "path": op.Path}
	switch op.Op {
	case "write":
		before, _ := os.Stat(op.Path)
		err = os.WriteFile(op.Path, []byte(op.Content), 0o644)
		// Whether the file's stat moved: a write of the same bytes in
		// the clock tick of the last write leaves it as it was, and
		// neither Neovim nor the host can see it (tests wait for the
		// host to handle it only when they can).
		if after, serr := os.Stat(op.Path); serr == nil {
			ev["statChanged"] = before == nil || !os.SameFile(before, after) ||
				!before.ModTime().Equal(after.ModTime()) || before.Size() != after.Size()
		}
	case "replace":
		tmp := op.Path + ".fakeagent~"
		if err = os.WriteFile(tmp, []byte(op.Content), 0o644); err == nil {
			err = os.Rename(tmp, op.Path)
		}
	case "delete":
		err = os.Remove(op.Path)
	case "rename":
		err = os.Rename(op.Path, op.To)
	case "read": // below
	default:
		err = fmt.Errorf("unknown disk op %q", op.Op)
	}
	if op.Op == "read" {
		var b []byte
		b, err = os.ReadFile(op.Path)
		ev["content"] = string(b)
	}
	if err != nil {
		ev["error"] = err.Error()
	}
	a.log("disk", ev)
}

type agent struct {
	cfg  Config
	sc   Scenario
	conn *acp.Connection
	out  *lockedWriter

	logMu sync.Mutex
	logW  io.Writer

	mu       sync.Mutex
	turn     int
	cancel   chan struct{}
	sessions int
	vars     map[string]any             // saved results for "$name" params
	initID   string                     // raw id of the initialize request (with init_raw)
	authed   bool                       // authenticate succeeded
	running  int                        // turns running
	steers   chan string                // steered texts for wait_steer
	known    map[string]bool            // sessions created, loaded or resumed here
	msgIDs   map[string]map[string]bool // the messageIds of the agent chunks sent, by session (a fork's: those it copied too)
	msgOrder map[string][]string        // the same, in the order sent
	turnMu   sync.Mutex                 // held by each turn with QueuePrompts
}

type lockedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	hooks []*writeHook
}

// writeHook runs fn (once, under the writer's lock: it must not write)
// after a message containing all of parts is written.
type writeHook struct {
	parts []string
	fn    func()
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	kept := l.hooks[:0]
	for _, h := range l.hooks {
		all := true
		for _, part := range h.parts {
			all = all && bytes.Contains(p, []byte(part))
		}
		if all {
			h.fn()
		} else {
			kept = append(kept, h)
		}
	}
	l.hooks = kept
	return n, err
}

// afterWrite runs fn once a message containing all of parts is written.
func (l *lockedWriter) afterWrite(fn func(), parts ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hooks = append(l.hooks, &writeHook{parts: parts, fn: fn})
}

// Config is what Serve plays and where it logs.
type Config struct {
	Scenario Scenario
	// Log gets every event as a JSON line (nil: none); an *os.File is
	// synced after each.
	Log io.Writer
	// Self is the fakeagent program, which spawn steps run ("": this
	// program).
	Self string
	// Exit ends the agent at an exit step (nil: os.Exit); it must not
	// return.
	Exit func(code int)
}

// Load reads a scenario file ("" is the empty scenario).
func Load(path string) (Scenario, error) {
	var sc Scenario
	if path == "" {
		return sc, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return sc, err
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		return sc, fmt.Errorf("scenario: %w", err)
	}
	return sc, nil
}

// Serve plays cfg's scenario as an ACP agent reading its client's messages
// from in and writing its own to out, until in ends.
func Serve(in io.Reader, out io.Writer, cfg Config) {
	a := &agent{cfg: cfg, sc: cfg.Scenario, out: &lockedWriter{w: out}, logW: cfg.Log, cancel: make(chan struct{}), steers: make(chan string, 16)}
	if a.logW == nil {
		a.logW = io.Discard
	}
	if len(a.sc.Start) > 0 {
		a.run(context.Background(), "", a.sc.Start)
	}
	// Like elephant.ai's stdio: a client that starts with Content-Length
	// framing is answered in it (FrameOutput: always).
	in, framed := readInput(in)
	if framed || a.sc.FrameOutput {
		a.out = &lockedWriter{w: framedWriter{w: out}}
	}
	if framed {
		a.log("framing", map[string]any{"mode": "content-length"})
	}
	if a.sc.LogWire || a.sc.InitRaw != "" {
		in = &wireReader{a: a, r: bufio.NewReaderSize(in, 1<<20)}
	}
	a.conn = acp.NewConnection(a.handle, a.out, in)
	<-a.conn.Done()
}

func (a *agent) exit(code int) {
	if a.cfg.Exit != nil {
		a.cfg.Exit(code)
	}
	os.Exit(code)
}

func (a *agent) log(event string, fields map[string]any) {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["event"] = event
	b, _ := json.Marshal(fields)
	a.logMu.Lock()
	defer a.logMu.Unlock()
	a.logW.Write(append(b, '\n'))
	if f, ok := a.logW.(*os.File); ok {
		f.Sync()
	}
}

func (a *agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	var p map[string]any
	_ = json.Unmarshal(params, &p)
	a.log("recv", map[string]any{"method": method, "params": p})
	if rerr := a.sc.Fail[method]; rerr != nil {
		return nil, rerr
	}
	if steps := a.sc.MethodSteps[method]; len(steps) > 0 {
		sid, _ := p["sessionId"].(string)
		if _, rerr := a.run(ctx, sid, steps); rerr != nil {
			return nil, rerr
		}
	}
	switch method {
	case acp.AgentMethodInitialize:
		if a.sc.InitHang {
			select {}
		}
		if a.sc.InitRaw != "" {
			a.mu.Lock()
			id := a.initID
			a.mu.Unlock()
			a.out.Write([]byte(strings.ReplaceAll(a.sc.InitRaw, "$id", id) + "\n"))
			select {}
		}
		res := map[string]any{
			"protocolVersion":   1,
			"agentCapabilities": map[string]any{"loadSession": false},
			"agentInfo":         map[string]any{"name": "fakeagent", "version": "0.0.1"},
		}
		for k, v := range a.sc.Initialize {
			res[k] = v
		}
		return res, nil
	case acp.AgentMethodAuthenticate:
		au := a.sc.Auth
		if au.Error != nil {
			return nil, au.Error
		}
		if v := os.Getenv(au.Env); au.Env != "" && (v == "" || au.Value != "" && v != au.Value) {
			return nil, &acp.RequestError{Code: -32000, Message: "Authentication required: " + au.Env + " is not set or wrong"}
		}
		if _, rerr := a.run(ctx, "", au.Steps); rerr != nil {
			return nil, rerr
		}
		a.mu.Lock()
		a.authed = true
		a.mu.Unlock()
		return map[string]any{}, nil
	case acp.AgentMethodSessionNew:
		if a.sc.NewSession.Hang {
			select {}
		}
		if a.sc.NewSession.Error != nil {
			return nil, a.sc.NewSession.Error
		}
		if au := a.sc.Auth; au.Required {
			a.mu.Lock()
			ok := a.authed
			a.mu.Unlock()
			if _, err := os.Stat(au.File); au.File != "" && err == nil {
				ok = true
			}
			if !ok {
				return nil, acp.NewAuthRequired(nil)
			}
		}
		a.mu.Lock()
		a.sessions++
		id := fmt.Sprintf("fake-session-%d", a.sessions)
		if cwd, _ := p["cwd"].(string); cwd != "" {
			if a.vars == nil {
				a.vars = map[string]any{}
			}
			a.vars["cwd"] = cwd // "$cwd/<path>" in params: a file of the session's directory
		}
		a.mu.Unlock()
		// An MCP-over-ACP server given: its id is "$mcpServerId".
		servers, _ := p["mcpServers"].([]any)
		for _, srv := range servers {
			if m, _ := srv.(map[string]any); m != nil && m["type"] == "acp" {
				a.mu.Lock()
				if a.vars == nil {
					a.vars = map[string]any{}
				}
				a.vars["mcpServerId"] = m["serverId"]
				a.mu.Unlock()
			}
		}
		if len(a.sc.NewSession.Before) > 0 {
			// Not ended by the answer: an async request outlives it.
			a.run(context.WithoutCancel(ctx), id, a.sc.NewSession.Before)
		}
		res := map[string]any{"sessionId": id}
		for k, v := range a.sc.NewSession.Result {
			res[k] = v
		}
		if len(a.sc.NewSession.AtOnce) > 0 {
			a.out.afterWrite(func() {
				go a.run(context.Background(), id, a.sc.NewSession.AtOnce)
			}, `"result"`, `"sessionId":"`+id+`"`)
		}
		if len(a.sc.NewSession.Steps) > 0 {
			go func() {
				time.Sleep(20 * time.Millisecond) // after the response is written
				a.run(context.Background(), id, a.sc.NewSession.Steps)
			}()
		}
		a.attached(id)
		return res, nil
	case acp.AgentMethodSessionList:
		if len(a.sc.SessionPages) > 0 {
			page := 0
			if c, ok := p["cursor"].(string); ok {
				fmt.Sscanf(c, "page-%d", &page)
			}
			if page >= len(a.sc.SessionPages) {
				return nil, acp.NewInvalidParams(map[string]any{"error": "bad cursor"})
			}
			res := map[string]any{"sessions": a.sc.SessionPages[page]}
			if page+1 < len(a.sc.SessionPages) {
				res["nextCursor"] = fmt.Sprintf("page-%d", page+1)
			}
			return res, nil
		}
		return map[string]any{"sessions": a.sc.Sessions}, nil
	case acp.AgentMethodSessionLoad:
		sid := fmt.Sprint(p["sessionId"])
		if _, rerr := a.run(ctx, sid, a.sc.LoadSteps); rerr != nil {
			return nil, rerr
		}
		a.attached(sid)
		return map[string]any{}, nil
	case "session/resume":
		a.attached(fmt.Sprint(p["sessionId"]))
		return map[string]any{}, nil
	case "session/fork":
		// JetBrains AIR's fork point (_meta.jetbrains.air.fork): a
		// messageId this agent sent on the session, as claude-agent-acp
		// and codex-acp need one they know (of a session resumed from
		// before this process, whose history it has not seen, any).
		parent := fmt.Sprint(p["sessionId"])
		at, hasAt := airForkPoint(p)
		if hasAt {
			a.mu.Lock()
			sent := a.msgIDs[parent]
			a.mu.Unlock()
			if sent != nil && !sent[at] {
				return nil, acp.NewInvalidParams(map[string]any{"error": "no message " + at + " in the session"})
			}
		}
		a.mu.Lock()
		a.sessions++
		id := fmt.Sprintf("fake-fork-%d", a.sessions)
		// The fork holds the parent's history up to the fork point, its
		// messages with their ids (a fork of the fork may name them).
		for _, m := range a.msgOrder[parent] {
			if a.msgIDs == nil {
				a.msgIDs = map[string]map[string]bool{}
			}
			if a.msgIDs[id] == nil {
				a.msgIDs[id] = map[string]bool{}
			}
			a.msgIDs[id][m] = true
			a.msgOrder = addOrder(a.msgOrder, id, m)
			if hasAt && m == at {
				break
			}
		}
		a.mu.Unlock()
		a.attached(id)
		return map[string]any{"sessionId": id}, nil
	case "session/status":
		status := a.sc.SessionStatus
		if status == "" {
			status = "saved"
		}
		return map[string]any{"status": status}, nil
	case "auth/status":
		if a.sc.AuthStatus != nil {
			return a.sc.AuthStatus, nil
		}
		return map[string]any{"state": "unknown"}, nil
	case "session/close", "session/delete", "session/archive", "session/unarchive", "logout":
		return map[string]any{}, nil
	case "session/set_title":
		// Stored as the agent would: trimmed (what it answers is shown).
		return map[string]any{"title": strings.TrimSpace(fmt.Sprint(p["title"]))}, nil
	case acp.AgentMethodSessionCancel:
		a.mu.Lock()
		close(a.cancel)
		a.cancel = make(chan struct{})
		a.mu.Unlock()
		return nil, nil
	case acp.AgentMethodSessionSetMode:
		if a.sc.EchoMode {
			go a.notify(context.Background(), fmt.Sprint(p["sessionId"]), map[string]any{
				"sessionUpdate": "current_mode_update", "currentModeId": p["modeId"]})
		}
		return map[string]any{}, nil
	case acp.AgentMethodSessionSetModel:
		return map[string]any{}, nil
	case acp.AgentMethodSessionSetConfigOption:
		opts := a.sc.ConfigOptions
		if opts == nil {
			opts = []any{}
		}
		return map[string]any{"configOptions": opts}, nil
	case "_session/steering":
		a.mu.Lock()
		running := a.running
		a.mu.Unlock()
		outcome := a.sc.SteerOutcome
		if outcome == "" {
			outcome = "promptRequired"
			if running > 0 {
				outcome = "injected"
			}
		}
		if outcome == "injected" {
			var sp struct {
				Prompt []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			}
			_ = json.Unmarshal(params, &sp)
			text := ""
			if len(sp.Prompt) > 0 {
				text = sp.Prompt[0].Text
			}
			a.steers <- text
		}
		return map[string]any{"outcome": outcome}, nil
	case acp.AgentMethodSessionPrompt:
		if sid := fmt.Sprint(p["sessionId"]); a.sc.StrictSessions && !a.knows(sid) {
			return nil, &acp.RequestError{Code: -32002, Message: "Resource not found: session " + sid}
		}
		if a.sc.QueuePrompts {
			a.turnMu.Lock()
			defer a.turnMu.Unlock()
		}
		a.mu.Lock()
		i := a.turn
		a.turn++
		a.running++
		a.mu.Unlock()
		defer func() {
			a.mu.Lock()
			a.running--
			a.mu.Unlock()
		}()
		stop := "end_turn"
		if len(a.sc.Turns) > 0 {
			if i >= len(a.sc.Turns) {
				i = len(a.sc.Turns) - 1
			}
			var rerr *acp.RequestError
			if stop, rerr = a.run(ctx, fmt.Sprint(p["sessionId"]), a.sc.Turns[i]); rerr != nil {
				return nil, rerr
			}
		}
		res := map[string]any{"stopReason": stop}
		if a.sc.Usage != nil {
			res["usage"] = a.sc.Usage
		}
		return res, nil
	}
	if strings.HasPrefix(method, "_") {
		return nil, acp.NewMethodNotFound(method)
	}
	return nil, acp.NewMethodNotFound(method)
}

// knows reports whether session sid was created, loaded or resumed here.
func (a *agent) knows(sid string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.known[sid]
}

// attached notes session sid and runs AttachSteps once its answer is
// written.
func (a *agent) attached(sid string) {
	a.mu.Lock()
	if a.known == nil {
		a.known = map[string]bool{}
	}
	a.known[sid] = true
	a.mu.Unlock()
	if len(a.sc.AttachSteps) == 0 {
		return
	}
	go func() {
		time.Sleep(50 * time.Millisecond) // after the response is written
		a.run(context.Background(), sid, a.sc.AttachSteps)
	}()
}

// save remembers a result's terminalId as "$terminalId" (and, when name
// is set, as "$name").
func (a *agent) save(name string, result any) {
	m, ok := result.(map[string]any)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.vars == nil {
		a.vars = map[string]any{}
	}
	if m["terminalId"] == nil {
		return
	}
	a.vars["terminalId"] = m["terminalId"]
	if name != "" {
		a.vars[name] = m["terminalId"]
	}
}

// substitute replaces "$name" strings (also inside maps and lists) with
// saved values; updates and params both go through it.
func (a *agent) substitute(v any) any {
	switch t := v.(type) {
	case string:
		if rest, ok := strings.CutPrefix(t, "$cwd/"); ok {
			a.mu.Lock()
			defer a.mu.Unlock()
			if cwd, ok := a.vars["cwd"].(string); ok {
				return cwd + "/" + rest
			}
			return t
		}
		if strings.HasPrefix(t, "$") {
			a.mu.Lock()
			defer a.mu.Unlock()
			if x, ok := a.vars[t[1:]]; ok {
				return x
			}
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = a.substitute(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = a.substitute(x)
		}
		return out
	}
	return v
}

func (a *agent) notify(ctx context.Context, sid string, update map[string]any) error {
	return a.conn.SendNotification(ctx, acp.ClientMethodSessionUpdate, map[string]any{"sessionId": sid, "update": update})
}

// request sends st's request, logs the answer and saves its terminalId;
// with st.Until it repeats until the answer contains that string.
func (a *agent) request(ctx context.Context, st Step, params any) {
	deadline := time.Now().Add(10 * time.Second)
	if st.TimeoutMS > 0 {
		deadline = time.Now().Add(time.Duration(st.TimeoutMS) * time.Millisecond)
	}
	for {
		res, entry, err := a.send(ctx, st, params)
		raw := []byte(res)
		if err != nil {
			raw, _ = json.Marshal(err)
		}
		if st.Until == "" || strings.Contains(string(raw), st.Until) || time.Now().After(deadline) || ctx.Err() != nil {
			a.log("response", entry)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call sends st's request once, logs the answer ("response") and saves
// its terminalId.
func (a *agent) call(ctx context.Context, st Step, params any) (json.RawMessage, *acp.RequestError) {
	res, entry, err := a.send(ctx, st, params)
	a.log("response", entry)
	return res, err
}

// send sends st's request once, saves its terminalId and returns the
// answer with its log entry.
func (a *agent) send(ctx context.Context, st Step, params any) (json.RawMessage, map[string]any, *acp.RequestError) {
	sent := time.Now()
	res, err := acp.SendRequest[json.RawMessage](a.conn, ctx, st.Request, params)
	entry := map[string]any{"method": st.Request, "sent_ns": sent.UnixNano(), "done_ns": time.Now().UnixNano()}
	var rerr *acp.RequestError
	if err != nil {
		entry["error"] = err
		if !errors.As(err, &rerr) {
			rerr = &acp.RequestError{Code: -32603, Message: err.Error()}
		}
	} else {
		var v any
		_ = json.Unmarshal(res, &v)
		entry["result"] = v
		a.save(st.Save, v)
	}
	return res, entry, rerr
}

func (a *agent) cancelled() chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cancel
}

// run plays steps and returns the stop reason.
func (a *agent) run(ctx context.Context, sid string, steps []Step) (string, *acp.RequestError) {
	cancelCh := a.cancelled()
	var async sync.WaitGroup
	turnSid := sid
	for _, st := range steps {
		sid := turnSid
		if st.Session != "" {
			sid = strings.ReplaceAll(st.Session, "$sessionId", turnSid)
		}
		switch {
		case st.Update != nil:
			a.notify(ctx, sid, a.substitute(st.Update).(map[string]any))
		case st.Text != "":
			u := map[string]any{"sessionUpdate": "agent_message_chunk",
				"content": map[string]any{"type": "text", "text": st.Text}}
			if st.MessageID != "" {
				u["messageId"] = st.MessageID
				a.mu.Lock()
				if a.msgIDs == nil {
					a.msgIDs = map[string]map[string]bool{}
				}
				if a.msgIDs[sid] == nil {
					a.msgIDs[sid] = map[string]bool{}
				}
				if !a.msgIDs[sid][st.MessageID] {
					a.msgOrder = addOrder(a.msgOrder, sid, st.MessageID)
				}
				a.msgIDs[sid][st.MessageID] = true
				a.mu.Unlock()
			}
			a.notify(ctx, sid, u)
		case st.Chunks > 0:
			for i := 0; i < st.Chunks; i++ {
				t := fmt.Sprintf("%s%d\n", st.Prefix, i)
				if len(st.Cycle) > 0 {
					t = strings.ReplaceAll(st.Cycle[i%len(st.Cycle)], "{i}", strconv.Itoa(i))
				}
				a.notify(ctx, sid, map[string]any{"sessionUpdate": "agent_message_chunk",
					"content": map[string]any{"type": "text", "text": t}})
			}
		case st.Mark != "":
			a.log("mark", map[string]any{"name": st.Mark, "session": sid, "ns": time.Now().UnixNano()})
		case st.Tools > 0:
			for i := 0; i < st.Tools; i++ {
				a.notify(ctx, sid, map[string]any{"sessionUpdate": "tool_call", "toolCallId": fmt.Sprintf("%s%d", st.Prefix, i),
					"title": fmt.Sprintf("Run check %d", i), "kind": "execute", "status": "pending"})
			}
			for i := 0; i < st.Tools; i++ {
				a.notify(ctx, sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": fmt.Sprintf("%s%d", st.Prefix, i),
					"status": "completed", "content": []any{map[string]any{"type": "content",
						"content": map[string]any{"type": "text", "text": fmt.Sprintf("check %d passed", i)}}}})
			}
		case st.Request != "":
			var params any
			if st.RawParams != "" {
				params = json.RawMessage(strings.ReplaceAll(st.RawParams, "$sessionId", sid))
			} else {
				m := map[string]any{"sessionId": sid}
				for k, v := range st.Params {
					m[k] = a.substitute(v)
				}
				params = m
			}
			if st.Async {
				var written chan struct{}
				if st.Written {
					written = make(chan struct{})
					once := sync.Once{}
					a.out.afterWrite(func() { once.Do(func() { close(written) }) }, `"method":"`+st.Request+`"`)
				}
				for i := 0; i < max(st.Repeat, 1); i++ {
					async.Add(1)
					go func(st Step) {
						defer async.Done()
						a.request(ctx, st, params)
					}(st)
				}
				if written != nil {
					select {
					case <-written:
					case <-time.After(10 * time.Second):
					}
				}
			} else {
				for i := 0; i < max(st.Repeat, 1) && ctx.Err() == nil; i++ {
					a.request(ctx, st, params)
				}
			}
		case st.WaitAsync:
			async.Wait()
		case st.WaitSteer:
			select {
			case text := <-a.steers:
				a.log("steered", map[string]any{"text": text})
				a.notify(ctx, sid, map[string]any{"sessionUpdate": "agent_message_chunk",
					"content": map[string]any{"type": "text", "text": "steered: " + text + "\n"}})
			case <-cancelCh:
				a.log("cancelled", nil)
				return "cancelled", nil
			case <-ctx.Done():
				return "cancelled", nil
			}
		case st.WaitCancel:
			select {
			case <-cancelCh:
				a.log("cancelled", nil)
				return "cancelled", nil
			case <-ctx.Done():
				return "cancelled", nil
			}
		case st.Exit != nil:
			if st.OnceFile != "" {
				if _, err := os.Stat(st.OnceFile); err == nil {
					continue
				}
				os.WriteFile(st.OnceFile, nil, 0o644)
			}
			a.exit(*st.Exit)
		case st.Hang:
			select {}
		case st.BigLine > 0:
			line := make([]byte, st.BigLine+1)
			for i := range line {
				line[i] = 'x'
			}
			line[st.BigLine] = '\n'
			a.out.Write(line)
		case st.Garbage != "":
			a.out.Write([]byte(st.Garbage + "\n"))
		case st.Raw != "":
			a.out.Write([]byte(strings.ReplaceAll(st.Raw, "$sessionId", sid) + "\n"))
		case st.RawBase64 != "":
			raw, err := base64.StdEncoding.DecodeString(st.RawBase64)
			if err != nil {
				fmt.Fprintln(os.Stderr, "fakeagent: raw_base64:", err)
			}
			a.out.Write(append(bytes.ReplaceAll(raw, []byte("$sessionId"), []byte(sid)), '\n'))
		case st.Notify != "":
			a.conn.SendNotification(ctx, st.Notify, a.substitute(st.Params))
		case st.WaitFile != "":
			wait := 10 * time.Second
			if st.TimeoutMS > 0 {
				wait = time.Duration(st.TimeoutMS) * time.Millisecond
			}
			for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if fi, err := os.Stat(st.WaitFile); err == nil && fi.Size() > 0 {
					break
				}
			}
		case st.Disk != nil:
			a.do(*st.Disk)
		case st.EditLoop != nil:
			a.editLoop(ctx, sid, *st.EditLoop)
		case st.Sh != "":
			out, err := exec.Command("sh", "-c", st.Sh).CombinedOutput()
			ev := map[string]any{"command": st.Sh, "output": string(out)}
			if err != nil {
				ev["error"] = err.Error()
			}
			a.log("sh", ev)
		case st.Flood > 0:
			chunk := strings.Repeat("f", st.FloodBytes)
			for i := 0; i < st.Flood; i++ {
				to := sid
				if st.FloodSession != "" {
					to = fmt.Sprintf("%s-%d", st.FloodSession, i%8)
				}
				a.notify(ctx, to, map[string]any{"sessionUpdate": "agent_message_chunk",
					"content": map[string]any{"type": "text", "text": chunk}})
			}
		case st.StderrText != "":
			fmt.Fprintln(os.Stderr, os.ExpandEnv(st.StderrText))
		case st.Stderr > 0:
			line := []byte(strings.Repeat("e", 99) + "\n")
			for n := 0; n < st.Stderr; n += len(line) {
				os.Stderr.Write(line)
			}
		case st.Spawn != "":
			if err := a.spawn(st); err != nil {
				fmt.Fprintln(os.Stderr, "fakeagent: spawn:", err)
			}
		case st.SleepMS > 0:
			time.Sleep(time.Duration(st.SleepMS) * time.Millisecond)
		case st.Error != nil:
			return "", st.Error
		case st.Stop != "":
			return st.Stop, nil
		}
	}
	select {
	case <-cancelCh:
		return "cancelled", nil
	default:
	}
	return "end_turn", nil
}

// wireReader passes stdin to the SDK and, with LogWire, logs each line in
// arrival order; it also notes the id of the initialize request.
type wireReader struct {
	a   *agent
	r   *bufio.Reader
	buf []byte
}

func (w *wireReader) Read(p []byte) (int, error) {
	if len(w.buf) == 0 {
		line, err := w.r.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		w.note(line)
		w.buf = line
	}
	n := copy(p, w.buf)
	w.buf = w.buf[n:]
	return n, nil
}

func (w *wireReader) note(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Result struct {
			Outcome struct {
				Outcome string `json:"outcome"`
			} `json:"outcome"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	if m.Method == acp.AgentMethodInitialize {
		w.a.mu.Lock()
		w.a.initID = string(m.ID)
		w.a.mu.Unlock()
	}
	if !w.a.sc.LogWire {
		return
	}
	ev := map[string]any{"method": m.Method, "id": string(m.ID)}
	if m.Error != nil {
		ev["error_code"] = m.Error.Code
		ev["error_message"] = m.Error.Message
	}
	if m.Result.Outcome.Outcome != "" {
		ev["outcome"] = m.Result.Outcome.Outcome
	}
	w.a.log("wire", ev)
}

// spawn starts "fakeagent sleeper" as st says.
func (a *agent) spawn(st Step) error {
	self := a.cfg.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	args := []string{"sleeper", "-pidfile", st.Spawn}
	if st.IgnoreSignals {
		args = append(args, "-ignore")
	}
	if st.Setsid {
		args = append(args, "-setsid")
	}
	if st.Orphan {
		args = append(args, "-orphan")
	}
	cmd := exec.Command(self, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	if st.Orphan {
		return cmd.Wait() // returns once the grandchild is started
	}
	go cmd.Wait()
	return nil
}

// readInput returns the agent's input as NDJSON, and whether the client
// framed it with Content-Length headers (its first bytes say).
func readInput(r io.Reader) (io.Reader, bool) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(len("Content-Length:"))
	if !strings.EqualFold(string(head), "Content-Length:") {
		return br, false
	}
	pr, pw := io.Pipe()
	go func() {
		for {
			n := -1
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					pw.CloseWithError(err)
					return
				}
				line = strings.TrimRight(line, "\r\n")
				if line == "" {
					break
				}
				if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "content-length") {
					n, _ = strconv.Atoi(strings.TrimSpace(v))
				}
			}
			if n < 0 {
				pw.CloseWithError(fmt.Errorf("a framed message without Content-Length"))
				return
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				pw.CloseWithError(err)
				return
			}
			pw.Write(append(body, '\n'))
		}
	}()
	return pr, true
}

// framedWriter writes each message (one per Write, as the SDK writes
// them) with a Content-Length header.
type framedWriter struct{ w io.Writer }

func (f framedWriter) Write(p []byte) (int, error) {
	body := strings.TrimRight(string(p), "\n")
	_, err := fmt.Fprintf(f.w, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return len(p), err
}

// addOrder appends id to order[sid] (order made when nil).
func addOrder(order map[string][]string, sid, id string) map[string][]string {
	if order == nil {
		order = map[string][]string{}
	}
	order[sid] = append(order[sid], id)
	return order
}

// airForkPoint is the messageId of session/fork's
// _meta.jetbrains.air.fork {version: 1, messageId}, if params has one.
func airForkPoint(params map[string]any) (string, bool) {
	m, _ := params["_meta"].(map[string]any)
	j, _ := m["jetbrains"].(map[string]any)
	air, _ := j["air"].(map[string]any)
	f, ok := air["fork"].(map[string]any)
	if !ok {
		return "", false
	}
	id, _ := f["messageId"].(string)
	return id, true
}
