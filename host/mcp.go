package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/quirks"
)

// This file wires editormcp: each session's editor as an MCP server passed
// in session/new (mcp.expose), its tools served by the same code as fs/*
// and terminal/* (mcpEditor), and MCP-over-ACP's requests.

// McpOptions is the mcp section of the config.
type McpOptions struct {
	Expose bool   `msgpack:"expose"`
	Name   string `msgpack:"name"`
}

// exposeMCP adds the session's editor server to servers, by the transport
// agent a takes: MCP-over-ACP when offered, else stdio (the `nvim-acp mcp`
// child), else loopback HTTP for agents known to drop stdio servers.
func (s *Session) exposeMCP(a *Agent, servers []acp.McpServer) []acp.McpServer {
	o := s.opts.Mcp
	if !o.Expose || o.Name == "" {
		return servers
	}
	for _, m := range s.opts.McpServers {
		if m["name"] == o.Name {
			s.emit(messageEvent("warn", fmt.Sprintf("mcp_servers has a server named %q: the editor's own is not passed (set mcp.name to pass both)", o.Name)))
			return servers
		}
	}
	info := a.initResp.AgentInfo
	// A session put back on its agent (a restart, a reconnect) keeps its
	// server: only the entry for the agent is made again.
	s.mu.Lock()
	ep := s.mcpEP
	s.mu.Unlock()
	fresh := ep == nil
	var err error
	if fresh {
		ep, err = s.h.mcp.Add(editormcp.NewServer(&mcpEditor{LuaQueries: &s.h.lua, s: s}, editormcp.Options{Root: s.opts.Agent.Cwd, Version: Version, Escape: s.h.bufs.encode}))
	}
	var srv acp.McpServer
	if err == nil {
		bin, _ := os.Executable()
		srv, err = ep.Entry(o.Name, a.initResp.AgentCapabilities.McpCapabilities, quirks.On(quirks.McpHTTP, info, s.opts.Quirks), bin)
	}
	if err != nil {
		s.emit(messageEvent("warn", "the editor's MCP server is not available to the agent: "+err.Error()))
		return servers
	}
	if fresh {
		s.mu.Lock()
		s.mcpEP = ep
		s.mu.Unlock()
		s.onEnd(ep.Close)
	}
	if srv.Stdio != nil && quirks.On(quirks.McpHTTP, info, s.opts.Quirks) && s.h.once("mcp-http:"+a.spec.Name) {
		s.emit(messageEvent("warn", fmt.Sprintf("%s drops stdio MCP servers and does not say it takes HTTP ones: the editor's tools (:help acp-tools) may not reach it; a newer version may take them.", a.spec.Name)))
	}
	if quirks.On(quirks.McpTrust, info, s.opts.Quirks) && !slices.Contains(s.opts.Agent.Cmd, "--skip-trust") && s.h.once("mcp-trust:"+a.spec.Name) {
		s.emit(messageEvent("info", fmt.Sprintf("%s uses the editor's MCP server (%q) only in folders it trusts: trust this folder in it, or add \"--skip-trust\" to agents.%s.cmd.", a.spec.Name, o.Name, a.spec.Name)))
	}
	s.log.Info("mcp: editor server passed", "name", o.Name, "acp", srv.Acp != nil, "http", srv.Http != nil)
	return append(servers, srv)
}

// mcpEditor is editormcp.Editor for a session: fs/* and terminal/* code
// for files and commands, Neovim's Lua for the queries.
type mcpEditor struct {
	*editormcp.LuaQueries
	s   *Session
	ran editormcp.Ran // run_command's terminals not released yet
}

// block shows a tool block of the tools in the chat.
func (e *mcpEditor) block(u map[string]any) {
	ev := updateEvent(u)
	ev["sid"] = e.s.sid
	e.s.h.ui.EmitWait(ev)
}

// ReadFile implements editormcp.Editor through fs/read_text_file's code.
func (e *mcpEditor) ReadFile(ctx context.Context, path string, line, limit int) (string, error) {
	req := acp.ReadTextFileRequest{SessionId: e.s.id, Path: path}
	if line > 0 {
		req.Line = &line
	}
	if limit > 0 {
		req.Limit = &limit
	}
	if editormcp.IsEditRead(ctx) {
		ctx = fsbridge.WithUnseen(ctx) // edit_file's own read: the agent never sees it
	}
	res, rerr := e.s.serveRead(ctx, req)
	if rerr != nil {
		return "", reqErr(rerr)
	}
	return res.Content, nil
}

// CheckRead implements editormcp.Editor through fs/read_text_file's
// workspace policy (the same question, the same "always" answers).
func (e *mcpEditor) CheckRead(ctx context.Context, path string) error {
	b, err := e.s.bridge(ctx)
	if err != nil {
		return fmt.Errorf("fs: %w", err)
	}
	err = b.CheckRead(context.WithValue(ctx, fsOpKey{}, "read"), path)
	if re := (*acp.RequestError)(nil); errors.As(err, &re) {
		return reqErr(re)
	}
	return err
}

// CheckLoad implements editormcp.Editor through fsbridge's CheckLoad: the
// workspace policy of reads, then the regular-file check and size bound of
// fs/read_text_file.
func (e *mcpEditor) CheckLoad(ctx context.Context, path string) error {
	b, err := e.s.bridge(ctx)
	if err != nil {
		return fmt.Errorf("fs: %w", err)
	}
	err = b.CheckLoad(context.WithValue(ctx, fsOpKey{}, "read"), path)
	if re := (*acp.RequestError)(nil); errors.As(err, &re) {
		return reqErr(re)
	}
	return err
}

// InWorkspace implements editormcp.Editor (none without a bridge).
func (e *mcpEditor) InWorkspace(ctx context.Context, paths []string) []bool {
	b, _ := e.s.bridge(ctx)
	return b.InWorkspace(paths...)
}

// WriteFile implements editormcp.Editor through fs/write_text_file's code.
func (e *mcpEditor) WriteFile(ctx context.Context, w editormcp.Write) error {
	id := fmt.Sprintf("nvim-mcp-%d", e.s.h.nextID())
	e.block(editormcp.WriteBlock(id, w))
	if w.Before != nil {
		// edit_file: made from the file as it was, which the agent never
		// saw; what it has seen is its last view with this edit made.
		ctx = fsbridge.WithEditOf(ctx, *w.Before)
	}
	_, rerr := e.s.serveWrite(ctx, acp.WriteTextFileRequest{SessionId: e.s.id, Path: w.Path, Content: w.Content})
	var err error
	if rerr != nil {
		err = reqErr(rerr)
	}
	e.block(editormcp.DoneBlock(id, err))
	return err
}

// RunCommand implements editormcp.Editor through terminal/create's code
// (consent, live view), then waits for the command, past its timeout
// killing it, and releases its terminal.
func (e *mcpEditor) RunCommand(ctx context.Context, r editormcp.RunRequest) (editormcp.RunResult, error) {
	s := e.s
	req := acp.CreateTerminalRequest{SessionId: s.id, Command: r.Command, OutputByteLimit: &r.OutputBytes}
	if r.Cwd != "" {
		req.Cwd = &r.Cwd
	}
	res, rerr := s.createTerminal(ctx, req)
	if rerr != nil {
		return editormcp.RunResult{}, reqErr(rerr)
	}
	tid := res.TerminalId
	id := fmt.Sprintf("nvim-mcp-%d", s.h.nextID())
	e.block(editormcp.RunBlock(id, r, tid))
	out, err := editormcp.Await(ctx, s.existingTerminals(), tid, r)
	for _, t := range e.ran.Add(tid, s.opts.Terminal.MaxTerminals) {
		_, _ = s.releaseTerminal(context.Background(), acp.ReleaseTerminalRequest{SessionId: s.id, TerminalId: t})
	}
	e.block(editormcp.DoneBlock(id, nil))
	return out, err
}

// reqErr is an ACP request error as the tool's error: its message, and
// its data's "error" when it adds to it.
func reqErr(re *acp.RequestError) error {
	if d, ok := re.Data.(map[string]any); ok {
		if m, ok := d["error"].(string); ok && m != "" {
			return errors.New(m)
		}
	}
	return errors.New(re.Message)
}

// mcpPeer sends MCP-over-ACP messages to agent a.
type mcpPeer struct{ a *Agent }

func (p mcpPeer) Notify(ctx context.Context, method string, params any) error {
	return p.a.conn.SendNotification(ctx, method, params)
}

// serveMCPMessage serves the agent's mcp/message requests (MCP-over-ACP):
// to the servers of its own sessions only.
func serveMCPMessage(ctx context.Context, a *Agent, params json.RawMessage) (any, *acp.RequestError) {
	res, err := a.h.mcp.ServeACP(ctx, params, a.owns, mcpPeer{a})
	var we *editormcp.WireError
	switch {
	case errors.As(err, &we):
		return nil, &acp.RequestError{Code: int(we.Code), Message: we.Message, Data: we.Data}
	case err != nil:
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return res, nil
}

// owns reports whether ep is the MCP server of one of a's sessions (one
// being opened included: agents connect before session/new answers).
func (a *Agent) owns(ep *editormcp.Endpoint) bool {
	for _, s := range a.h.allSessions() {
		s.mu.Lock()
		mine := s.mcpEP == ep && s.agent == a
		s.mu.Unlock()
		if mine {
			return true
		}
	}
	return false
}
