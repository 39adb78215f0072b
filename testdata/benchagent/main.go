// Command benchagent is the ACP agent of nvim-acp's client benchmarks
// (e2e/acp_bench_test.go, `make bench`). It is a plain acp-go-sdk agent, as
// a Go agent would be, and each prompt is one measurement, given as words:
//
//	read PATH N [LINE LIMIT]   N sequential fs/read_text_file
//	readc PATH BATCH N         N batches of BATCH concurrent reads
//	write PATH N               read PATH, then N fs/write_text_file of a
//	                           3-line change (lines 101-103, two versions in turn)
//	term BYTES N               N times: terminal/create `head -c BYTES
//	                           /dev/zero`, wait_for_exit, output, release
//	mcpread PATH N LINE LIMIT  N sequential read_file calls of the editor's
//	                           MCP server (the stdio entry session/new gave),
//	                           by a plain JSON-RPC client that decodes each
//	                           answer once with encoding/json, as this agent
//	                           decodes ACP's
//	sdkread PATH N LINE LIMIT  the same through the official Go SDK's client
//	mcpdiag N                  N calls of its diagnostics tool (limit 2000),
//	                           plain client
//
// It appends one JSON line per prompt to $BENCH_AGENT_OUT:
// {"op", "n", "bytes", "lat_ns": [...], "cpu_ns"} with one latency per
// request (per batch for readc, per command for term: create to exit),
// measured from the request sent to its response decoded, and the agent's
// own CPU time for the whole prompt. Errors end the turn with
// "refusal" and an "error" field in the output line.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
)

type agent struct {
	conn *acp.Connection
	out  string

	mu      sync.Mutex
	servers []acp.McpServer    // session/new's mcpServers
	mcp     *mcp.ClientSession // connected on first use
	plain   *plainClient       // connected on first use
}

type result struct {
	Op    string  `json:"op"`
	N     int     `json:"n"`
	Bytes int     `json:"bytes"`
	Lat   []int64 `json:"lat_ns"`
	CPU   int64   `json:"cpu_ns"` // the agent's own CPU time over the timed requests
	Error string  `json:"error,omitempty"`
}

func main() {
	a := &agent{out: os.Getenv("BENCH_AGENT_OUT")}
	a.conn = acp.NewConnection(a.handle, os.Stdout, os.Stdin)
	<-a.conn.Done()
}

func (a *agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.AgentMethodInitialize:
		return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber}, nil
	case acp.AgentMethodSessionNew:
		var p acp.NewSessionRequest
		if err := json.Unmarshal(params, &p); err == nil {
			a.mu.Lock()
			a.servers = p.McpServers
			a.mu.Unlock()
		}
		return acp.NewSessionResponse{SessionId: "bench"}, nil
	case acp.AgentMethodSessionCancel:
		return nil, nil
	case acp.AgentMethodSessionPrompt:
		var p acp.PromptRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		var text string
		for _, b := range p.Prompt {
			if b.Text != nil {
				text += b.Text.Text
			}
		}
		res := a.run(ctx, p.SessionId, strings.Fields(text))
		stop := acp.StopReasonEndTurn
		if res.Error != "" {
			stop = acp.StopReasonRefusal
		}
		if err := a.record(res); err != nil {
			return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
		}
		return acp.PromptResponse{StopReason: stop}, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

func (a *agent) record(r result) error {
	if a.out == "" {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(a.out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
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

func (a *agent) run(ctx context.Context, sid acp.SessionId, w []string) (res result) {
	if len(w) == 0 {
		return result{Error: "empty prompt"}
	}
	res = result{Op: w[0]}
	think()
	var err error
	cpu0, _ := cputime.Process(0)
	defer func() {
		if cpu1, err := cputime.Process(0); err == nil {
			res.CPU = int64(cpu1 - cpu0)
		}
	}()
	switch w[0] {
	case "read":
		res.N = atoi(w, 2)
		err = a.reads(ctx, sid, w[1], res.N, atoi(w, 3), atoi(w, 4), &res)
	case "readc":
		res.N = atoi(w, 3)
		err = a.concurrentReads(ctx, sid, w[1], atoi(w, 2), res.N, &res)
	case "write":
		res.N = atoi(w, 2)
		err = a.writes(ctx, sid, w[1], res.N, &res)
	case "term":
		res.N = atoi(w, 2)
		err = a.terminals(ctx, sid, atoi(w, 1), res.N, &res)
	case "mcpread", "sdkread":
		res.N = atoi(w, 2)
		err = a.mcpCalls(ctx, w[0] == "sdkread", res.N, "read_file", map[string]any{"path": w[1], "line": atoi(w, 3), "limit": atoi(w, 4)}, &res)
	case "mcpdiag":
		res.N = atoi(w, 1)
		err = a.mcpCalls(ctx, false, res.N, "diagnostics", map[string]any{"limit": 2000}, &res)
	default:
		err = fmt.Errorf("unknown op %q", w[0])
	}
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

func (a *agent) read(ctx context.Context, sid acp.SessionId, path string, line, limit int) (string, error) {
	req := acp.ReadTextFileRequest{SessionId: sid, Path: path}
	if line > 0 {
		req.Line = &line
	}
	if limit > 0 {
		req.Limit = &limit
	}
	r, err := acp.SendRequest[acp.ReadTextFileResponse](a.conn, ctx, acp.ClientMethodFsReadTextFile, req)
	return r.Content, err
}

func (a *agent) reads(ctx context.Context, sid acp.SessionId, path string, n, line, limit int, res *result) error {
	first, err := a.read(ctx, sid, path, line, limit)
	if err != nil {
		return err
	}
	res.Bytes = len(first)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		got, err := a.read(ctx, sid, path, line, limit)
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if got != first {
			return fmt.Errorf("read %d: %d bytes differ from the first read's %d", i, len(got), len(first))
		}
		res.Lat = append(res.Lat, int64(d))
	}
	return nil
}

func (a *agent) concurrentReads(ctx context.Context, sid acp.SessionId, path string, batch, n int, res *result) error {
	first, err := a.read(ctx, sid, path, 0, 0)
	if err != nil {
		return err
	}
	res.Bytes = len(first)
	for i := 0; i < n; i++ {
		var wg sync.WaitGroup
		errs := make(chan error, batch)
		t0 := time.Now()
		for j := 0; j < batch; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := a.read(ctx, sid, path, 0, 0)
				if err == nil && got != first {
					err = errors.New("concurrent read differs from the first read")
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		res.Lat = append(res.Lat, int64(time.Since(t0)))
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

func (a *agent) writes(ctx context.Context, sid acp.SessionId, path string, n int, res *result) error {
	text, err := a.read(ctx, sid, path, 0, 0)
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
		content := strings.Join(lines, "")
		t0 := time.Now()
		err := a.conn.SendRequestNoResult(ctx, acp.ClientMethodFsWriteTextFile,
			acp.WriteTextFileRequest{SessionId: sid, Path: path, Content: content})
		d := time.Since(t0)
		if err != nil {
			return err
		}
		res.Lat = append(res.Lat, int64(d))
	}
	return nil
}

func (a *agent) terminals(ctx context.Context, sid acp.SessionId, size, n int, res *result) error {
	res.Bytes = size
	for i := 0; i < n; i++ {
		t0 := time.Now()
		c, err := acp.SendRequest[acp.CreateTerminalResponse](a.conn, ctx, acp.ClientMethodTerminalCreate,
			acp.CreateTerminalRequest{SessionId: sid, Command: "head", Args: []string{"-c", strconv.Itoa(size), "/dev/zero"}})
		if err != nil {
			return fmt.Errorf("terminal/create: %w", err)
		}
		w, err := acp.SendRequest[acp.WaitForTerminalExitResponse](a.conn, ctx, acp.ClientMethodTerminalWaitForExit,
			acp.WaitForTerminalExitRequest{SessionId: sid, TerminalId: c.TerminalId})
		d := time.Since(t0)
		if err != nil {
			return fmt.Errorf("terminal/wait_for_exit: %w", err)
		}
		if w.ExitCode == nil || *w.ExitCode != 0 {
			return fmt.Errorf("head exited with %v (signal %v)", w.ExitCode, w.Signal)
		}
		if _, err := acp.SendRequest[acp.TerminalOutputResponse](a.conn, ctx, acp.ClientMethodTerminalOutput,
			acp.TerminalOutputRequest{SessionId: sid, TerminalId: c.TerminalId}); err != nil {
			return fmt.Errorf("terminal/output: %w", err)
		}
		if err := a.conn.SendRequestNoResult(ctx, acp.ClientMethodTerminalRelease,
			acp.ReleaseTerminalRequest{SessionId: sid, TerminalId: c.TerminalId}); err != nil {
			return fmt.Errorf("terminal/release: %w", err)
		}
		res.Lat = append(res.Lat, int64(d))
	}
	return nil
}

// nvimCommand is the command of the "nvim" stdio entry.
func (a *agent) nvimCommand() (*exec.Cmd, error) {
	for _, s := range a.servers {
		if s.Stdio == nil || s.Stdio.Name != "nvim" {
			continue
		}
		cmd := exec.Command(s.Stdio.Command, s.Stdio.Args...)
		cmd.Env = os.Environ()
		for _, e := range s.Stdio.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		return cmd, nil
	}
	return nil, errors.New("session/new gave no stdio MCP server named nvim")
}

// client connects the Go SDK's client to the editor's MCP server on first
// use.
func (a *agent) client(ctx context.Context) (*mcp.ClientSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mcp != nil {
		return a.mcp, nil
	}
	cmd, err := a.nvimCommand()
	if err != nil {
		return nil, err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "benchagent"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp connect: %w", err)
	}
	a.mcp = cs
	return cs, nil
}

// plainClient speaks MCP as newline-delimited JSON-RPC to the stdio child,
// one call at a time.
type plainClient struct {
	in  *json.Encoder
	out *bufio.Reader
	id  int
}

// plainCaller connects the plain client on first use.
func (a *agent) plainCaller() (*plainClient, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.plain != nil {
		return a.plain, nil
	}
	cmd, err := a.nvimCommand()
	if err != nil {
		return nil, err
	}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &plainClient{in: json.NewEncoder(w), out: bufio.NewReaderSize(r, 1<<20)}
	var init json.RawMessage
	if err := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "benchagent", "version": "0"}}, &init); err != nil {
		return nil, fmt.Errorf("mcp initialize: %w", err)
	}
	if err := c.in.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return nil, err
	}
	a.plain = c
	return c, nil
}

// call sends a request and decodes its result into result.
func (c *plainClient) call(method string, params, result any) error {
	c.id++
	if err := c.in.Encode(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return err
		}
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		// One decode of the envelope; the result is decoded by the caller.
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		if m.ID == nil || *m.ID != c.id {
			continue // a notification
		}
		if m.Error != nil {
			return errors.New(m.Error.Message)
		}
		return json.Unmarshal(m.Result, result)
	}
}

// callTool calls tool and returns its text.
func (c *plainClient) callTool(tool string, args map[string]any) (string, error) {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := c.call("tools/call", map[string]any{"name": tool, "arguments": args}, &r); err != nil {
		return "", err
	}
	var text string
	for _, b := range r.Content {
		text += b.Text
	}
	if r.IsError {
		return "", fmt.Errorf("%s: %s", tool, text)
	}
	return text, nil
}

// mcpCalls calls tool n times (after one untimed call) with the SDK's
// client or the plain one, each answer's text the same as the first's.
func (a *agent) mcpCalls(ctx context.Context, sdk bool, n int, tool string, args map[string]any, res *result) error {
	var call func() (string, error)
	if sdk {
		cs, err := a.client(ctx)
		if err != nil {
			return err
		}
		call = func() (string, error) {
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				return "", err
			}
			var text string
			for _, c := range r.Content {
				if t, ok := c.(*mcp.TextContent); ok {
					text += t.Text
				}
			}
			if r.IsError {
				return "", fmt.Errorf("%s: %s", tool, text)
			}
			return text, nil
		}
	} else {
		pc, err := a.plainCaller()
		if err != nil {
			return err
		}
		call = func() (string, error) { return pc.callTool(tool, args) }
	}
	first, err := call()
	if err != nil {
		return err
	}
	res.Bytes = len(first)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		got, err := call()
		d := time.Since(t0)
		if err != nil {
			return err
		}
		if got != first {
			return fmt.Errorf("%s %d: %d bytes differ from the first call's %d", tool, i, len(got), len(first))
		}
		res.Lat = append(res.Lat, int64(d))
	}
	return nil
}

// benchEdit is version v (0 or 1) of line 101+k as the write case edits it.
func benchEdit(v, k int) string {
	return fmt.Sprintf("edited by the bench agent (%c), line %d\n", "ab"[v], 101+k)
}
