package demoagent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UnstableForkSession copies a session (session/fork): the fork has the
// history so far and goes on alone; the original is untouched.
func (a *agent) UnstableForkSession(ctx context.Context, p acp.UnstableForkSessionRequest) (acp.UnstableForkSessionResponse, error) {
	a.mu.Lock()
	parent := a.sessions[p.SessionId]
	var rec record
	if parent != nil {
		rec = *parent.rec
		rec.History = append([]entry(nil), parent.rec.History...)
	}
	a.mu.Unlock()
	if parent == nil {
		return acp.UnstableForkSessionResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session " + string(p.SessionId)})
	}
	id := acp.SessionId("demo-" + uuid.NewString()[:8])
	rec.ID, rec.Updated = string(id), now()
	if p.Cwd != "" {
		rec.Cwd = p.Cwd
	}
	if rec.Title != "" {
		rec.Title = "Fork of " + rec.Title
	}
	a.mu.Lock()
	a.sessions[id] = &session{rec: &rec, mcp: forkServers(p.McpServers)}
	a.mu.Unlock()
	_ = a.store.save(&rec)
	a.announce(id)
	return acp.UnstableForkSessionResponse{SessionId: id, Modes: modes(rec.Mode), Models: unstableModels(rec.Model)}, nil
}

// forkServers are session/fork's MCP servers as session/new's (the same
// JSON, another Go type).
func forkServers(in []acp.UnstableMcpServer) []acp.McpServer {
	var out []acp.McpServer
	for _, s := range in {
		b, err := json.Marshal(s)
		if err != nil {
			continue
		}
		var m acp.McpServer
		if json.Unmarshal(b, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func unstableModels(current string) *acp.UnstableSessionModelState {
	b, _ := json.Marshal(models(current))
	var m acp.UnstableSessionModelState
	_ = json.Unmarshal(b, &m)
	return &m
}

// UnstableLogout is logout: the demo has no account, so it only says so.
func (a *agent) UnstableLogout(ctx context.Context, p acp.UnstableLogoutRequest) (acp.UnstableLogoutResponse, error) {
	fmt.Fprintln(os.Stderr, "demo-agent: logged out (the demo has no account; nothing to forget)")
	return acp.UnstableLogoutResponse{}, nil
}

// askSchema is /ask's form: one field of each kind, with defaults, so it
// can be sent as it comes.
const askSchema = `{"type":"object","required":["name"],"properties":{
"name":{"type":"string","title":"Name of the thing to build","default":"parser","minLength":1},
"size":{"type":"string","title":"Size","oneOf":[{"const":"small","title":"Small","description":"one file"},{"const":"large","title":"Large","description":"a package"}],"default":"small"},
"files":{"type":"integer","title":"Files to touch","minimum":1,"maximum":9,"default":2},
"tests":{"type":"boolean","title":"Write tests","default":true}}}`

// runAsk asks a question with a form (elicitation/create) and answers
// with what the user chose.
func (t *turn) runAsk() {
	caps := t.a.caps.Elicitation
	if caps == nil || caps.Form == nil {
		t.stream("I would ask you with a form, but " + errNoElicitation.Error() + ".")
		return
	}
	if !t.stream("Before I start, a question (a form: ACP elicitation).\n\n") {
		return
	}
	res, err := t.a.raw.Call(t.ctx, "elicitation/create", map[string]any{
		"sessionId": t.sid, "mode": "form",
		"message":         "What should the demo build?",
		"requestedSchema": json.RawMessage(askSchema),
	})
	if err != nil {
		if t.ctx.Err() == nil {
			t.stream("The question failed: " + err.Error())
		}
		return
	}
	var ans struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res, &ans); err != nil {
		t.stream("I could not read your answer: " + err.Error())
		return
	}
	switch ans.Action {
	case "accept":
		var b strings.Builder
		b.WriteString("You answered:\n\n")
		for _, k := range []string{"name", "size", "files", "tests"} {
			if v, ok := ans.Content[k]; ok {
				fmt.Fprintf(&b, "- %s: `%v`\n", k, v)
			}
		}
		b.WriteString("\nA real agent would now build it that way.")
		t.stream(b.String())
	case "decline":
		t.stream("You declined to answer: I go on without it.")
	default:
		t.stream("You cancelled the question.")
	}
}

// editorServer is the session's MCP server of the editor: the one named
// "nvim", else the first.
func (s *session) editorServer() (acp.McpServer, bool) {
	for _, m := range s.mcp {
		if (m.Stdio != nil && m.Stdio.Name == "nvim") || (m.Http != nil && m.Http.Name == "nvim") {
			return m, true
		}
	}
	for _, m := range s.mcp {
		if m.Stdio != nil || m.Http != nil {
			return m, true
		}
	}
	return acp.McpServer{}, false
}

// headerTransport adds the server entry's headers to each request.
type headerTransport struct {
	h    []acp.HttpHeader
	base http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, x := range h.h {
		r.Header.Set(x.Name, x.Value)
	}
	return h.base.RoundTrip(r)
}

// connectMCP opens a client session on the MCP server entry m.
func connectMCP(ctx context.Context, m acp.McpServer) (*mcp.ClientSession, error) {
	var tr mcp.Transport
	switch {
	case m.Stdio != nil:
		cmd := exec.CommandContext(ctx, m.Stdio.Command, m.Stdio.Args...)
		cmd.Env = os.Environ()
		for _, e := range m.Stdio.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
		}
		tr = &mcp.CommandTransport{Command: cmd}
	case m.Http != nil:
		tr = &mcp.StreamableClientTransport{Endpoint: m.Http.Url,
			HTTPClient: &http.Client{Transport: headerTransport{h: m.Http.Headers, base: http.DefaultTransport}}}
	default:
		return nil, fmt.Errorf("an MCP server the demo cannot reach")
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "nvim-acp-demo", Version: "0.2.0"}, nil)
	return c.Connect(ctx, tr, nil)
}

// callText calls an MCP tool and returns its text.
func callText(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s: %s", name, strings.TrimSpace(b.String()))
	}
	return b.String(), nil
}

// modifiedBuffer picks the first buffer open_buffers says has unsaved
// changes (its lines are "path (notes)").
func modifiedBuffer(list string) string {
	for _, l := range strings.Split(list, "\n") {
		if p, notes, ok := strings.Cut(l, " ("); ok && strings.Contains(notes, "unsaved changes") {
			return p
		}
	}
	return ""
}

// tool reports one call of the editor's tools as a tool call block.
func (t *turn) tool(title string, kind acp.ToolKind, call func() (string, error)) (string, bool) {
	id := acp.ToolCallId("demo-mcp-" + uuid.NewString()[:8])
	if !t.send(acp.StartToolCall(id, title, acp.WithStartKind(kind), acp.WithStartStatus(acp.ToolCallStatusInProgress))) {
		return "", false
	}
	out, err := call()
	if err != nil {
		t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed),
			acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(err.Error()))})))
		return err.Error(), false
	}
	t.send(acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(firstLines(out, 8)))})))
	return out, true
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("[%d more lines]", len(lines)-n))
	}
	return strings.Join(lines, "\n")
}

// runTools calls the editor's MCP tools, as agents do: which buffers are
// open, the text of one with unsaved changes (what the editor has, not
// the disk), and the diagnostics.
func (t *turn) runTools() {
	t.a.mu.Lock()
	srv, ok := t.s.editorServer()
	t.a.mu.Unlock()
	if !ok {
		t.stream("The editor passed me no MCP server (`mcp = { expose = false }`?), so there are no editor tools to call.")
		return
	}
	if !t.stream("I call your editor's tools over MCP (the `nvim` server nvim-acp passed in session/new), as a real agent does.\n\n") {
		return
	}
	ctx, cancel := context.WithTimeout(t.ctx, time.Minute)
	defer cancel()
	cs, err := connectMCP(ctx, srv)
	if err != nil {
		t.stream("I could not connect to the editor's MCP server: " + err.Error())
		return
	}
	defer cs.Close()
	list, ok := t.tool("nvim: open_buffers", acp.ToolKindRead, func() (string, error) {
		return callText(ctx, cs, "open_buffers", map[string]any{})
	})
	if !ok {
		t.stream("\n\nThe editor did not list its buffers: " + list)
		return
	}
	path := modifiedBuffer(list)
	if path == "" {
		if !t.stream("No open buffer has unsaved changes: change one (without saving) and send `/tools` again to see me read your unsaved text.\n\n") {
			return
		}
	} else {
		text, ok := t.tool("nvim: read_file "+path, acp.ToolKindRead, func() (string, error) {
			return callText(ctx, cs, "read_file", map[string]any{"path": path})
		})
		if ok {
			first, _, _ := strings.Cut(strings.TrimRight(text, "\n"), "\n")
			if !t.stream(fmt.Sprintf("`%s` has unsaved changes; the editor gave me its text as you see it (%d lines), not the disk's. It starts:\n\n> %s\n\n",
				path, countLines(text), first)) {
				return
			}
		} else if !t.stream("Reading it failed: " + text + "\n\n") {
			return
		}
	}
	diags, ok := t.tool("nvim: diagnostics", acp.ToolKindRead, func() (string, error) {
		return callText(ctx, cs, "diagnostics", map[string]any{})
	})
	switch {
	case !ok:
		t.stream("The diagnostics failed: " + diags)
	case strings.TrimSpace(diags) == "" || strings.HasPrefix(strings.TrimSpace(diags), "no diagnostics"):
		t.stream("Your language servers report no diagnostics.")
	default:
		n := 0
		for _, l := range strings.Split(diags, "\n") {
			if strings.Contains(l, ": ") && !strings.HasPrefix(l, "[") {
				n++
			}
		}
		first, _, _ := strings.Cut(strings.TrimSpace(diags), "\n")
		noun := "diagnostics"
		if n == 1 {
			noun = "diagnostic"
		}
		t.stream(fmt.Sprintf("The editor reports %d %s; the first: `%s`.", n, noun, first))
	}
}
