package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// This file wires fsbridge into the host: fs/read_text_file and
// fs/write_text_file for each session, the Neovim side of fsbridge.Editor
// (lua/acp/buffers.lua through the buffer cache of bufcache.go: an
// unchanged buffer is read without calling Neovim), and fsbridge.Asker,
// which routes the bridge's questions to the user:
//
//   - outside-workspace questions go through the permission prompt, as a
//     permission event with a synthesized tool call, answered by
//     acp_answer_permission(id, n), n the option's number;
//   - conflicts and write reviews go to the prompt queue (lua/acp/prompt/init.lua,
//     content from lua/acp/prompt/fsprompt.lua) as an fs_question event (a diff
//     window with one key per answer), answered by
//     acp_answer_fs_question(id, optionId).
//
// A session's Bridge is created on the session's first fs/* request (or
// :AcpChanges), not when the session starts: agents that never call fs/*
// (codex adapters, the newest claude-agent-acp) then cost no file watcher.
// Lua reports loaded buffers to the host through acp_buf_loaded and
// acp_buf_unloaded (lua/acp/buffers.lua setup_autocmds), fanned out to every
// session's Bridge.

// sessionFS is a session's fs/* state.
type sessionFS struct {
	initMu sync.Mutex // serializes creating the bridge

	mu      sync.Mutex
	b       *fsbridge.Bridge
	seeding bool       // the bridge is being seeded with the loaded buffers
	pending []bufEvent // buffer events that arrived while seeding
	diffs   []diffNote // diffs announced before the bridge existed (bounded)
}

// diffNote is a diff an agent announced in a tool call.
type diffNote struct {
	path    string
	oldText *string
	newText string
}

// maxPendingDiffs bounds the diffs kept for a bridge not created yet.
const maxPendingDiffs = 64

type bufEvent struct {
	path   string
	loaded bool
}

// fsOpKey carries "read" or "write" to the Asker through the request's ctx.
type fsOpKey struct{}

// bridge returns the session's Bridge, creating it on first use.
func (s *Session) bridge(ctx context.Context) (*fsbridge.Bridge, error) {
	f := &s.fsb
	f.mu.Lock()
	b := f.b
	f.mu.Unlock()
	if b != nil {
		return b, nil
	}
	f.initMu.Lock()
	defer f.initMu.Unlock()
	f.mu.Lock()
	b = f.b
	f.mu.Unlock()
	if b != nil {
		return b, nil
	}
	fo := s.opts.Fs
	b, err := fsbridge.New(fsbridge.Config{
		Root:           s.opts.Agent.Cwd,
		AllowRoots:     fo.AllowRoots,
		WriteMode:      fo.Write,
		MaxBytes:       fo.MaxBytes,
		MissingAsEmpty: fo.MissingAsEmpty,
		Texts:          s.h.bufs.texts,
		UserWrites:     func(p string) { s.h.willWrite(p) },
	}, &nvimEditor{s: s}, &nvimAsker{s: s}, s.log.With("component", "fsbridge"))
	if err != nil {
		return nil, err
	}
	b.SetSink(checkpointSink{s: s, next: s.rev})
	f.mu.Lock()
	f.seeding = true
	f.mu.Unlock()
	var loaded []string
	if err := s.h.execLua(ctx, "return require('acp.buffers').list_loaded()", &loaded); err != nil {
		s.log.Warn("fs: cannot list loaded buffers", "err", err)
	}
	f.mu.Lock()
	b.SetLoaded(loaded)
	for _, ev := range f.pending {
		if ev.loaded {
			b.BufferLoaded(ev.path)
		} else {
			b.BufferUnloaded(ev.path)
		}
	}
	f.pending = nil
	for _, d := range f.diffs {
		b.Announce(d.path, d.oldText, d.newText)
	}
	f.diffs = nil
	f.seeding = false
	f.b = b
	f.mu.Unlock()
	s.onEnd(func() { _ = b.Close() })
	return b, nil
}

// bufferEvent tells the session's bridge (if any) that path's buffer was
// loaded or unloaded.
func (s *Session) bufferEvent(path string, loaded bool) {
	f := &s.fsb
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.b != nil:
		if loaded {
			f.b.BufferLoaded(path)
		} else {
			f.b.BufferUnloaded(path)
		}
	case f.seeding:
		f.pending = append(f.pending, bufEvent{path, loaded})
	}
}

// noteDiffs hands the diffs a tool call announces (content blocks {type =
// "diff", path, oldText, newText}, from session/update tool_call and
// tool_call_update, or session/request_permission) to the session's bridge:
// the agent's later write of newText is merged against oldText, so the
// user's edits made meanwhile survive (see fsbridge.Bridge.Announce).
//
// A diff with no oldText for a file that exists (claude adapters announce
// every Write so) gets the file's text, before the tool runs: the user is
// shown what the write replaces, not a new file. That text is the user's
// (their unsaved lines, the lines typed since the agent read the file),
// not the agent's: it is never the base the write is merged against, or
// the write would take back every line typed since the agent's read.
func (s *Session) noteDiffs(toolCall map[string]any) {
	content, _ := toolCall["content"].([]any)
	status, _ := toolCall["status"].(string)
	for _, c := range content {
		m, _ := c.(map[string]any)
		if m == nil || m["type"] != "diff" {
			continue
		}
		path, _ := m["path"].(string)
		newText, ok := m["newText"].(string)
		if path == "" || !ok {
			continue
		}
		o, hasOld := m["oldText"].(string)
		if !hasOld {
			if status != "completed" && status != "failed" {
				if o, ok := s.shownText(path); ok && o != newText {
					m["oldText"] = o // shown, never a merge base
				}
			}
			continue
		}
		oldText := &o
		f := &s.fsb
		f.mu.Lock()
		if f.b != nil {
			b := f.b
			f.mu.Unlock()
			b.Announce(path, oldText, newText)
			continue
		}
		f.diffs = append(f.diffs, diffNote{path, oldText, newText})
		if len(f.diffs) > maxPendingDiffs {
			f.diffs = f.diffs[1:]
		}
		f.mu.Unlock()
	}
}

// shownText is path's text as the user sees it, when it is an existing
// text file (see fsbridge.Bridge.Shown).
func (s *Session) shownText(path string) (string, bool) {
	if !filepath.IsAbs(path) {
		return "", false
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	b, err := s.bridge(ctx)
	if err != nil {
		return "", false
	}
	text, exists, err := b.Shown(ctx, path)
	return text, exists && err == nil
}

// serveRead implements fs/read_text_file, for requests through acp-go-sdk
// (dispatch.go) and the fast path (fastfs.go), which takes the
// well-formed ones first.
func (s *Session) serveRead(ctx context.Context, req acp.ReadTextFileRequest) (acp.ReadTextFileResponse, *acp.RequestError) {
	s.fsReads.Store(true)
	return serveBridge(ctx, s, "read", req, (*fsbridge.Bridge).ReadTextFile)
}

// serveWrite implements fs/write_text_file.
func (s *Session) serveWrite(ctx context.Context, req acp.WriteTextFileRequest) (acp.WriteTextFileResponse, *acp.RequestError) {
	return serveBridge(ctx, s, "write", req, (*fsbridge.Bridge).WriteTextFile)
}

// serveBridge runs op ("read" or "write", for the Asker) on the session's
// bridge and turns its error into the agent's.
func serveBridge[Req, Res any](ctx context.Context, s *Session, op string, req Req,
	call func(*fsbridge.Bridge, context.Context, Req) (Res, error)) (Res, *acp.RequestError) {
	var zero Res
	b, err := s.bridge(ctx)
	if err != nil {
		return zero, acp.NewInternalError(map[string]any{"error": fmt.Sprintf("fs: %v", err)})
	}
	res, err := call(b, context.WithValue(ctx, fsOpKey{}, op), req)
	return res, bridgeError(err)
}

// bridgeError is the agent's error for err, an error of the bridge.
func bridgeError(err error) *acp.RequestError {
	if err == nil {
		return nil
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re
	}
	return acp.NewInternalError(map[string]any{"error": err.Error()})
}

// heldBridge is the session's bridge when it exists (bridge without
// creating it: nil otherwise).
func (s *Session) heldBridge() *fsbridge.Bridge {
	f := &s.fsb
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b
}

// execLua runs code in Neovim and decodes its result into result, giving up
// (and leaving the call to finish in the background) when ctx ends.
func (h *Host) execLua(ctx context.Context, code string, result any, args ...any) error {
	if args == nil {
		args = []any{}
	}
	if ctx.Done() == nil {
		return h.nv.ExecLua(code, result, args...)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- h.nv.ExecLua(code, result, args...) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nvimEditor is fsbridge.Editor over lua/acp/buffers.lua for one session
// (the session only matters for Warn, which goes to its chat).
type nvimEditor struct {
	s *Session
}

// Snapshot implements fsbridge.Editor, through the host's buffer cache
// (bufcache.go).
func (e *nvimEditor) Snapshot(ctx context.Context, realPath string) (fsbridge.Buffer, bool, error) {
	return e.s.h.bufs.snapshot(ctx, e.s.h, realPath, fsbridge.StatVersion(realPath))
}

// SnapshotAt implements fsbridge.VersionSnapshotter: Snapshot with the
// file's version as the read found it (one stat less per read).
func (e *nvimEditor) SnapshotAt(ctx context.Context, realPath string, disk fsbridge.FileVersion) (fsbridge.Buffer, bool, error) {
	return e.s.h.bufs.snapshot(ctx, e.s.h, realPath, disk)
}

// Apply implements fsbridge.Editor.
func (e *nvimEditor) Apply(ctx context.Context, realPath string, bufnr, tick int, hunks []fsbridge.Hunk, eol bool) error {
	return e.ApplyResult(ctx, realPath, bufnr, tick, hunks, eol, nil, "")
}

// ApplyResult implements fsbridge.ResultEditor: the host's copy of the
// buffer becomes lines and text (when given) without reading them back.
func (e *nvimEditor) ApplyResult(ctx context.Context, realPath string, bufnr, tick int, hunks []fsbridge.Hunk, eol bool, lines []string, text string) error {
	return e.keyed(ctx, "apply_keyed", realPath, bufnr, tick, hunks, eol, appliedBuffer{lines, text, eol})
}

// Put implements fsbridge.UnsavedEditor through buffers.put_unsaved.
func (e *nvimEditor) Put(ctx context.Context, realPath string, bufnr, tick int, hunks []fsbridge.Hunk, eol bool) error {
	return e.keyed(ctx, "put_unsaved_keyed", realPath, bufnr, tick, hunks, eol, appliedBuffer{})
}

// PutResult implements fsbridge.ResultPutter: Put, the host's copy of the
// buffer becoming lines and text; it is used again once Took has told
// Neovim of the file's new version.
func (e *nvimEditor) PutResult(ctx context.Context, realPath string, bufnr, tick int, hunks []fsbridge.Hunk, eol bool, lines []string, text string) error {
	return e.keyed(ctx, "put_unsaved_keyed", realPath, bufnr, tick, hunks, eol, appliedBuffer{lines, text, eol})
}

// keyed runs buffers.<fn> (apply_keyed or put_unsaved_keyed) on bufnr as
// of tick, and updates the host's copy of the buffer from its result: the
// new key, and res (the buffer's new lines, when known).
func (e *nvimEditor) keyed(ctx context.Context, fn, realPath string, bufnr, tick int, hunks []fsbridge.Hunk, eol bool, res appliedBuffer) error {
	hunks = luaHunks(hunks)
	// The change signal's epoch before the change: the buffer's new key is
	// current in it (the keyed functions do not signal their own changes).
	epoch, sigOK := e.s.h.bufs.sig.current(ctx, e.s.h)
	var r any
	if err := e.s.h.execLua(ctx, "return require('acp.buffers')."+fn+"(...)", &r, bufnr, tick, hunks, eol, realPath); err != nil {
		return fmt.Errorf("buffers.%s: %w", fn, err)
	}
	switch r := r.(type) {
	case map[string]any:
		key := -1
		switch k := r["key"].(type) {
		case int64:
			key = int(k)
		case uint64:
			key = int(k)
		}
		e.s.h.bufs.applied(bufnr, tick, hunks, key, epoch, sigOK, res)
		return nil
	case string:
		switch {
		case r == "buffer changed":
			return fmt.Errorf("buffer %d: %w", bufnr, fsbridge.ErrBufferChanged)
		case r == "path changed":
			return fmt.Errorf("buffer %d: %w", bufnr, fsbridge.ErrPathChanged)
		case strings.HasPrefix(r, "not a regular file"):
			return fmt.Errorf("buffer %d: %s: %w", bufnr, r, fsbridge.ErrNotRegular)
		}
		return fmt.Errorf("buffer %d: %s", bufnr, r)
	}
	return fmt.Errorf("buffers.%s: unexpected result %v", fn, r)
}

// Took implements fsbridge.UnsavedEditor through buffers.took.
func (e *nvimEditor) Took(ctx context.Context, realPath string, bufnr int, v fsbridge.FileVersion) error {
	return e.took(ctx, realPath, bufnr, v, false)
}

// TookSaved implements fsbridge.SavedEditor through buffers.took.
func (e *nvimEditor) TookSaved(ctx context.Context, realPath string, bufnr int, v fsbridge.FileVersion) error {
	return e.took(ctx, realPath, bufnr, v, true)
}

func (e *nvimEditor) took(ctx context.Context, realPath string, bufnr int, v fsbridge.FileVersion, saved bool) error {
	sec, nsec, size, ino := v.Stat()
	var res any
	if err := e.s.h.execLua(ctx, "return require('acp.buffers').took(...)", &res, bufnr, realPath, saved, []int64{sec, nsec, size, int64(ino)}); err != nil {
		e.s.h.bufs.forget(realPath)
		return fmt.Errorf("buffers.took: %w", err)
	}
	switch res {
	case true:
	case "file changed":
		// Written since by another: the buffer stays behind the disk,
		// which the watcher brings it in step with.
		e.s.h.bufs.forget(realPath)
		return nil
	default:
		e.s.h.bufs.forget(realPath)
		return fmt.Errorf("buffer %d is no longer %s's", bufnr, realPath)
	}
	if saved {
		// No longer modified: its key moved.
		e.s.h.bufs.forget(realPath)
	} else if after := fsbridge.StatVersion(realPath); after == v {
		// Neovim recorded this version of the file, unchanged throughout.
		e.s.h.bufs.took(realPath, bufnr, after)
	}
	return nil
}

// Sync implements fsbridge.Syncer through buffers.sync_keyed.
func (e *nvimEditor) Sync(ctx context.Context, realPath string, bufnr, tick int, theirs []string, hunks, moved []fsbridge.Hunk, eol bool, result []string, text string) error {
	sum := sha256.Sum256([]byte(strings.Join(theirs, "\n")))
	expect := map[string]any{"count": len(theirs), "sha": hex.EncodeToString(sum[:])}
	var res any
	err := e.s.h.execLua(ctx, "return require('acp.buffers').sync_keyed(...)", &res, bufnr, tick, realPath, expect, luaHunks(hunks), luaHunks(moved), eol)
	// The host's copy is read again (the buffer was reloaded).
	e.s.h.bufs.forget(realPath)
	if err != nil {
		return fmt.Errorf("buffers.sync: %w", err)
	}
	if r, ok := res.(string); ok {
		switch r {
		case "buffer changed", "disk changed":
			return fmt.Errorf("buffer %d: %s: %w", bufnr, r, fsbridge.ErrBufferChanged)
		case "path changed":
			return fmt.Errorf("buffer %d: %w", bufnr, fsbridge.ErrPathChanged)
		}
		return fmt.Errorf("buffer %d: %s", bufnr, r)
	}
	return nil
}

// luaHunks makes hunks safe to send to Lua (nil lists would arrive as
// holes or vim.NIL).
func luaHunks(hunks []fsbridge.Hunk) []fsbridge.Hunk {
	if hunks == nil {
		return []fsbridge.Hunk{}
	}
	for i := range hunks {
		if hunks[i].Lines == nil {
			hunks[i].Lines = []string{}
		}
	}
	return hunks
}

// Confirm implements fsbridge.Confirmer: buffers.confirm takes the buffer
// as its file's, and the host's copy of it is the buffer as the bridge saw
// it, so the next read needs no snapshot.
func (e *nvimEditor) Confirm(ctx context.Context, realPath string, buf fsbridge.Buffer, v fsbridge.FileVersion) bool {
	sec, nsec, size, ino := v.Stat()
	epoch, sigOK := e.s.h.bufs.sig.current(ctx, e.s.h)
	var ok bool
	if err := e.s.h.execLua(ctx, "return require('acp.buffers').confirm(...)", &ok, buf.Bufnr, buf.Tick, realPath, []int64{sec, nsec, size, int64(ino)}); err != nil {
		e.s.log.Debug("fs: buffers.confirm failed", "path", realPath, "err", err)
		return false
	}
	if ok {
		buf.Stale = false
		buf.Freeze()
		e.s.h.bufs.put(realPath, newEntry(buf, packKey(&buf), v, epoch, sigOK))
	}
	return ok
}

var _ fsbridge.HeldEditor = (*nvimEditor)(nil)

// HeldLoadsPending implements fsbridge.HeldEditor (see loadSync).
func (e *nvimEditor) HeldLoadsPending(ctx context.Context) (pending, known bool) {
	return e.s.h.heldLoadsPending(fsbridge.Drained(ctx))
}

// HeldSnapshot implements fsbridge.HeldEditor: the host's own copy of
// the buffer, when it is known current (bufCache.held).
func (e *nvimEditor) HeldSnapshot(ctx context.Context, realPath string, disk fsbridge.FileVersion) (fsbridge.Buffer, bool) {
	return e.s.h.bufs.held(realPath, disk, fsbridge.Drained(ctx))
}

// LoadsPending implements fsbridge.LoadChecker (see loadSync).
func (e *nvimEditor) LoadsPending(ctx context.Context) bool {
	return e.s.h.loadsPending(ctx)
}

// Reload implements fsbridge.Editor.
func (e *nvimEditor) Reload(ctx context.Context, realPath string) (bool, error) {
	var r struct {
		Modified bool `msgpack:"modified"`
		Reloaded bool `msgpack:"reloaded"`
	}
	if err := e.s.h.execLua(ctx, "return require('acp.buffers').reload(...)", &r, realPath); err != nil {
		return false, fmt.Errorf("buffers.reload: %w", err)
	}
	return r.Modified, nil
}

// Warn implements fsbridge.Editor: the warning goes to the session's chat
// (and, once per message, to vim.notify; see lua/acp/init.lua).
func (e *nvimEditor) Warn(ctx context.Context, msg string) {
	e.s.log.Warn("fs", "warning", msg)
	e.s.emit(fsWarningEvent(msg))
}

// nvimAsker is fsbridge.Asker for one session.
type nvimAsker struct {
	s *Session
}

// permissionKinds maps the bridge's outside-workspace options to ACP
// permission option kinds (the ids are the same words).
var permissionKinds = map[string]string{
	fsbridge.OptAllowOnce:    string(acp.PermissionOptionKindAllowOnce),
	fsbridge.OptAllowAlways:  string(acp.PermissionOptionKindAllowAlways),
	fsbridge.OptRejectOnce:   string(acp.PermissionOptionKindRejectOnce),
	fsbridge.OptRejectAlways: string(acp.PermissionOptionKindRejectAlways),
}

// Ask implements fsbridge.Asker: it shows q and waits for the answer
// (acp_answer_fs_question, or acp_answer_permission for an outside-workspace
// question), session/cancel, the session's end or ctx.
func (a *nvimAsker) Ask(ctx context.Context, q fsbridge.Question) (string, error) {
	s := a.s
	var choice string
	var err error
	if q.Kind == fsbridge.KindOutsideWorkspace {
		var i int
		i, err = s.askOption(ctx, outsideRequest(ctx, q), len(q.Options))
		if i >= 0 {
			choice = q.Options[i].ID
		}
	} else {
		choice, err = s.ask(ctx, fsQuestion, fsQuestionEvent(q))
	}
	if err != nil {
		return "", err
	}
	if choice == "" {
		return "", errors.New("cancelled")
	}
	return choice, nil
}

// outsideRequest is a RequestPermissionRequest-shaped table for an
// outside-workspace question. It has no toolCallId: it is the client's
// question, not one of the agent's tool calls.
func outsideRequest(ctx context.Context, q fsbridge.Question) map[string]any {
	op, _ := ctx.Value(fsOpKey{}).(string)
	where := q.Where
	if where == "" {
		where = "outside the workspace"
	}
	title, kind := "Read "+where+": ", string(acp.ToolKindRead)
	if op == "write" {
		title, kind = "Write "+where+": ", string(acp.ToolKindEdit)
	}
	var body string
	for i, l := range q.Body {
		if i > 0 {
			body += "\n"
		}
		body += l
	}
	options := make([]any, 0, len(q.Options))
	for _, o := range q.Options {
		k := permissionKinds[o.ID]
		if k == "" {
			k = string(acp.PermissionOptionKindRejectOnce)
		}
		options = append(options, map[string]any{"optionId": o.ID, "name": o.Label, "kind": k})
	}
	return map[string]any{
		"toolCall": map[string]any{
			"title":     title + q.Path,
			"kind":      kind,
			"locations": []any{map[string]any{"path": q.Path}},
			"content":   []any{map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": body}}},
		},
		"options": options,
		// Not an agent's tool call: client rules and "remember" offers do
		// not apply (the bridge remembers "always" for the session).
		"client_question": "outside_workspace",
	}
}

// rpcBufLoaded is acp_buf_loaded(realpath, gen), sent by
// lua/acp/buffers.lua (gen: see loadSync).
func (h *Host) rpcBufLoaded(path string, gen int64) {
	for _, s := range h.allSessions() {
		s.bufferEvent(path, true)
	}
	h.loads.handledGen(gen)
}

// rpcBufUnloaded is acp_buf_unloaded(realpath, gen).
func (h *Host) rpcBufUnloaded(path string, gen int64) {
	h.bufs.forget(path)
	for _, s := range h.allSessions() {
		s.bufferEvent(path, false)
	}
	h.loads.handledGen(gen)
}

// rpcChanges is acp_changes(sid): the files changed in the session, each
// with its content from before the first change: the agent's (the review
// record, review.go), and the user's own writes through the bridge (code
// blocks applied), with who wrote each (by_agent, by_user).
func (h *Host) rpcChanges(sid int) ([]map[string]any, error) {
	s, err := h.session(sid)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	at := map[string]int{}
	for _, c := range s.rev.Rec.Changes() {
		at[c.Path] = len(out)
		out = append(out, map[string]any{"path": c.Path, "original": c.Original, "existed": c.Existed, "pending": c.Pending, "by_agent": true})
	}
	s.fsb.mu.Lock()
	b := s.fsb.b
	s.fsb.mu.Unlock()
	if b != nil {
		for _, c := range b.Changes() {
			if !c.ByUser {
				continue
			}
			if i, ok := at[c.Path]; ok {
				out[i]["by_user"] = true
				continue
			}
			out = append(out, map[string]any{"path": c.Path, "original": c.Original, "existed": c.Existed, "by_user": true, "by_agent": c.ByAgent})
		}
	}
	return out, nil
}

func (h *Host) allSessions() []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		out = append(out, s)
	}
	return out
}
