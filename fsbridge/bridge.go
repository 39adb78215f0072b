// Package fsbridge services the ACP client file methods fs/read_text_file and
// fs/write_text_file for one session: live Neovim buffers win over the disk,
// writes land in loaded buffers as minimal hunks merged three-way with the
// user's edits, other writes are atomic, paths outside the workspace need the
// user's consent, and files the agent touched (or the user has loaded) are
// watched so buffers never go stale silently.
//
// fsbridge knows nothing of Neovim's RPC: the host adapts the Editor and Asker
// interfaces (see lua/acp/buffers.lua for the Neovim side of Editor).
package fsbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/textcache"
	"github.com/nvim-acp/nvim-acp/written"
)

// Buffer is a loaded Neovim buffer as Editor.Snapshot reports it.
type Buffer struct {
	Bufnr int      `json:"bufnr" msgpack:"bufnr"`
	Lines []string `json:"lines" msgpack:"lines"`
	// EOL: writing the buffer ends the file with a newline ('eol' or
	// 'fixeol', and not 'binary'). An empty buffer is Lines {""}, EOL false.
	EOL      bool `json:"eol" msgpack:"eol"`
	Modified bool `json:"modified" msgpack:"modified"`
	Tick     int  `json:"tick" msgpack:"tick"` // b:changedtick
	// Stale: the file on disk is not the one the buffer was last read from
	// or written to (changed since, or replaced). An unmodified stale buffer
	// is not trusted for reads: the disk is read instead.
	Stale bool `json:"stale" msgpack:"stale"`
	// FileFormat is the buffer's 'fileformat' ("unix", "dos", "mac"; "unix"
	// when 'binary'): how its lines end on disk.
	FileFormat string `json:"ff" msgpack:"ff"`

	text   string // Text(), when frozen (see Freeze)
	frozen bool
}

// Text is the file content writing the buffer would produce, line ends
// included: the agent reads a CRLF file's buffer as CRLF text, as on disk.
func (b Buffer) Text() string {
	if b.frozen {
		return b.text
	}
	if len(b.Lines) == 1 && b.Lines[0] == "" && !b.EOL {
		return ""
	}
	return joinText(b.Lines, b.EOL, b.lineEnding())
}

// Editor is the bridge's view of Neovim. Paths are real (symlink-free,
// absolute) paths. Implementations must be safe for concurrent use.
type Editor interface {
	// Snapshot returns the loaded buffer for realPath: a buffer that was
	// read from (or written to) realPath and whose name still resolves to
	// it; ok is false if there is none. It never reads the disk (Stale says
	// the file changed since). At most one round trip (the host answers
	// from its copy of an unchanged buffer).
	Snapshot(ctx context.Context, realPath string) (b Buffer, ok bool, err error)
	// Apply applies hunks (0-based, against the buffer as of tick, sorted;
	// apply bottom-up) to bufnr as one undo step, keeping every window's
	// view and the marks outside the changed lines, sets the buffer's final
	// newline to eol, and writes the buffer. If b:changedtick is no longer
	// tick it changes nothing and returns an error wrapping ErrBufferChanged.
	// If the buffer's name no longer resolves to realPath, or its file is
	// not a regular file, it writes nothing (undoing the change) and returns
	// an error wrapping ErrPathChanged or ErrNotRegular.
	Apply(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool) error
	// Reload reloads realPath's buffer from disk keeping views if it is
	// unmodified and stale. modified is true when the buffer has unsaved
	// changes and the file on disk differs from what the buffer was read
	// from (the buffer is then left untouched).
	Reload(ctx context.Context, realPath string) (modified bool, err error)
	// Warn shows msg to the user (vim.notify WARN).
	Warn(ctx context.Context, msg string)
}

// VersionSnapshotter is an Editor whose Snapshot can take the file's
// version when the bridge knows it already (a read just located the file),
// rather than looking at the file again.
type VersionSnapshotter interface {
	SnapshotAt(ctx context.Context, realPath string, disk FileVersion) (b Buffer, ok bool, err error)
}

// Confirmer is an Editor that can take a buffer it reported as stale (its
// origin unknown, or its file touched) as its file's again, once the bridge
// found the buffer's text byte for byte equal to the file in version v.
// Confirm reports whether it did; it refuses when the buffer or the file
// moved since.
type Confirmer interface {
	Confirm(ctx context.Context, realPath string, buf Buffer, v FileVersion) bool
}

// Asker asks the user a question, through the chat's permission prompt UI.
type Asker interface {
	// Ask shows q and returns the ID of the option the user chose, or an
	// error (ctx cancelled, UI gone). It blocks until answered.
	Ask(ctx context.Context, q Question) (string, error)
}

// Question kinds.
const (
	KindOutsideWorkspace = "outside_workspace"
	KindConflict         = "conflict"
	KindReview           = "review"
)

// Option IDs the bridge offers.
const (
	OptAllowOnce    = "allow_once"
	OptAllowAlways  = "allow_always"
	OptRejectOnce   = "reject_once"
	OptRejectAlways = "reject_always"
	OptTakeAgent    = "take_agent"
	OptKeepMine     = "keep_mine"
	OptOpenDiff     = "open_diff"
	OptAccept       = "accept"
	OptReject       = "reject"
)

// Question is one prompt for the user.
type Question struct {
	Kind  string `json:"kind" msgpack:"kind"` // KindOutsideWorkspace | KindConflict | KindReview
	Title string `json:"title" msgpack:"title"`
	Path  string `json:"path" msgpack:"path"`
	// Where (KindOutsideWorkspace): why the path asks, e.g. "outside the
	// workspace" or "in a .git directory, ...".
	Where string `json:"where,omitempty" msgpack:"where,omitempty"`
	// Body: explanation lines, then (conflict, review) a unified diff.
	Body []string `json:"body" msgpack:"body"`
	// Old, New: the current text and the proposed text, for a diff view.
	Old string `json:"old" msgpack:"old"`
	New string `json:"new" msgpack:"new"`
	// ShowDiff asks the UI to open a side-by-side diff of Old and New with
	// the prompt (set when the user picked OptOpenDiff).
	ShowDiff bool     `json:"show_diff" msgpack:"show_diff"`
	Options  []Option `json:"options" msgpack:"options"`
	// ByUser: the edit is the user's own (a code block applied from the
	// chat), not the agent's: no agent waits for the answer.
	ByUser bool `json:"by_user,omitempty" msgpack:"by_user,omitempty"`
}

// Option is one answer; Key is the suggested key to press.
type Option struct {
	ID    string `json:"id" msgpack:"id"`
	Label string `json:"label" msgpack:"label"`
	Key   string `json:"key" msgpack:"key"`
}

// Write modes.
const (
	WriteApply  = "apply"
	WriteReview = "review"
)

// DefaultMaxBytes is the default size cap for reads and writes.
const DefaultMaxBytes = 8 << 20

// Config configures a Bridge.
type Config struct {
	Root       string   // the session cwd; absolute
	AllowRoots []string // extra roots inside the workspace; absolute
	WriteMode  string   // WriteApply (default) or WriteReview
	MaxBytes   int64    // size cap; <= 0 means DefaultMaxBytes
	// MissingAsEmpty: a missing file reads as "" (gemini's quirk).
	MissingAsEmpty bool
	// Debounce for file change events per path; 0 means 100ms.
	Debounce time.Duration
	// NoWatch disables fsnotify watching.
	NoWatch bool
	// Texts, when set, keeps the text of files read from disk by version
	// (shared by the sessions of a host): an unchanged file no buffer
	// holds is not read and checked again.
	Texts *textcache.Cache
	// UserWrites, when set, is called with a file's real path just
	// before each write of the user's (WriteUser, a WriteTextFile with
	// WithUserWrite or WithProposal) writes it.
	UserWrites func(path string)
}

// Change is a file the agent wrote in this session, with its content before
// the session first touched it (read or write).
type Change struct {
	Path     string `json:"path" msgpack:"path"`
	Original string `json:"original" msgpack:"original"`
	Existed  bool   `json:"existed" msgpack:"existed"`
	// ByAgent, ByUser: who wrote the file this session (the agent, the
	// user applying a code block from the chat, or both).
	ByAgent bool `json:"by_agent" msgpack:"by_agent"`
	ByUser  bool `json:"by_user" msgpack:"by_user"`
}

type snapshot struct {
	text  string // what the agent last read or wrote (full text)
	tick  int    // changedtick when read from a buffer, else 0
	state fileState
}

// Bridge services fs/* for one ACP session. Its methods are safe for
// concurrent use.
type Bridge struct {
	cfg   Config
	roots []string
	ed    Editor
	ask   Asker
	log   *slog.Logger

	mu        sync.Mutex
	loaded    map[string]bool
	snaps     map[string]snapshot
	originals map[string]Change
	written   []string
	decisions map[string]bool // outside-workspace answers remembered for the session
	locks     map[string]*sync.Mutex
	announced map[string]announcement // edits the agent announced, by real path (see Announce)
	annOrder  []string                // keys of announced, oldest first
	checked   textMemo                // texts that passed checkText
	sink      ChangeSink              // told of every change (SetSink)
	gone      map[string]string       // a deleted file's last text, while its buffer has unsaved changes (reconcile)

	w *watcher // nil when not watching

	// syncs: directory syncs of writes already answered (putAndWrite);
	// Close waits for them.
	syncs sync.WaitGroup

	// own: the texts of files the bridge put in place last (putAndWrite),
	// while nothing else has changed them.
	own written.Memo

	// unreported is read-held by each write answered early (WithAnswer)
	// until it is reported; Settle takes it to wait for them.
	unreported sync.RWMutex

	youngHits atomic.Int64 // reads youngRead answered (tests)
	ownHits   atomic.Int64 // disk texts diskNow had from own (tests)
}

// New returns a Bridge for one session. ed and ask may be nil (no buffers; every
// question answered with a refusal).
func New(cfg Config, ed Editor, ask Asker, log *slog.Logger) (*Bridge, error) {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if !filepath.IsAbs(cfg.Root) {
		return nil, fmt.Errorf("fsbridge: root must be an absolute path: %q", cfg.Root)
	}
	switch cfg.WriteMode {
	case "":
		cfg.WriteMode = WriteApply
	case WriteApply, WriteReview:
	default:
		return nil, fmt.Errorf("fsbridge: write mode must be %q or %q, not %q", WriteApply, WriteReview, cfg.WriteMode)
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Debounce <= 0 {
		cfg.Debounce = 100 * time.Millisecond
	}
	b := &Bridge{
		cfg:       cfg,
		ed:        ed,
		ask:       ask,
		log:       log,
		loaded:    map[string]bool{},
		snaps:     map[string]snapshot{},
		gone:      map[string]string{},
		originals: map[string]Change{},
		decisions: map[string]bool{},
		locks:     map[string]*sync.Mutex{},
		announced: map[string]announcement{},
	}
	for _, r := range append([]string{cfg.Root}, cfg.AllowRoots...) {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("fsbridge: allowed root must be an absolute path: %q", r)
		}
		rr, err := realPath(r)
		if err != nil {
			return nil, fmt.Errorf("fsbridge: root %s: %w", r, err)
		}
		b.roots = append(b.roots, rr)
	}
	if !cfg.NoWatch {
		w, err := newWatcher(b)
		if err != nil {
			log.Warn("fsbridge: file watching disabled", "err", err)
		} else {
			b.w = w
		}
	}
	return b, nil
}

// Close stops watching. The bridge still answers requests afterwards.
func (b *Bridge) Close() error {
	b.syncs.Wait()
	b.own.Close()
	if b.w != nil {
		return b.w.close()
	}
	return nil
}

// SetLoaded replaces the set of real paths loaded in Neovim buffers.
func (b *Bridge) SetLoaded(paths []string) {
	norm := map[string]bool{}
	for _, p := range paths {
		if rp, ok := b.norm(p); ok {
			norm[rp] = true
		}
	}
	b.mu.Lock()
	old := b.loaded
	b.loaded = norm
	b.mu.Unlock()
	for p := range old {
		if !norm[p] {
			b.w.untrack(p, reasonLoaded)
		}
	}
	for p := range norm {
		if !old[p] && b.inWorkspace(p) {
			b.w.track(p, reasonLoaded)
		}
	}
}

// BufferLoaded records that a buffer for path (a real path) is loaded.
func (b *Bridge) BufferLoaded(path string) {
	rp, ok := b.norm(path)
	if !ok {
		return
	}
	b.mu.Lock()
	b.loaded[rp] = true
	b.mu.Unlock()
	if b.inWorkspace(rp) {
		b.w.track(rp, reasonLoaded)
	}
}

// BufferUnloaded records that path's buffer is gone.
func (b *Bridge) BufferUnloaded(path string) {
	rp, ok := b.norm(path)
	if !ok {
		return
	}
	b.mu.Lock()
	delete(b.loaded, rp)
	b.mu.Unlock()
	b.w.untrack(rp, reasonLoaded)
}

func (b *Bridge) norm(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	rp, err := realPath(p)
	if err != nil {
		return filepath.Clean(p), true
	}
	return rp, true
}

func (b *Bridge) isLoaded(p string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.loaded[p]
}

// Changes lists the files the agent wrote, in the order first written.
func (b *Bridge) Changes() []Change {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Change, 0, len(b.written))
	for _, p := range b.written {
		out = append(out, b.originals[p])
	}
	return out
}

func (b *Bridge) inWorkspace(p string) bool {
	_, ok := b.rootOf(p)
	return ok
}

// rootOf is the workspace root (or allowed root) p is in.
func (b *Bridge) rootOf(p string) (string, bool) {
	for _, r := range b.roots {
		if within(p, r) {
			return r, true
		}
	}
	return "", false
}

// check validates path, resolves it the way the kernel will (see resolve)
// and applies the workspace policy to where it leads. The file is opened
// later by its resolved path and verified to be the one checked (see
// openRegular, writeRegular): a path that changes in between is checked
// again.
func (b *Bridge) check(ctx context.Context, path, op string) (resolution, error) {
	if !filepath.IsAbs(path) {
		return resolution{}, reqErr(CodeInvalidParams, path, ReasonRelative, "path must be absolute: %q", path)
	}
	if len(path) > 1 && strings.HasSuffix(path, string(filepath.Separator)) {
		return resolution{}, reqErr(CodeInvalidParams, path, ReasonIsDir, "path ends with %q, so it names a directory, not a file: %q", string(filepath.Separator), path)
	}
	r, err := resolve(path)
	if err != nil {
		return r, osErr(path, err)
	}
	real := r.Path
	// Where: why the user is asked ("" = inside the workspace, no question).
	where := ""
	switch {
	case !b.inWorkspace(real):
		where = "outside the workspace"
	case op == "write" && inGitDir(real):
		// git runs the programs its config and hooks name (core.fsmonitor,
		// core.pager, diff.external, hooks/*): a write there would change
		// what a git command the user approved runs.
		where = "in a .git directory, where git finds programs to run"
	}
	if where == "" {
		return r, nil
	}
	if userAct(ctx) {
		return r, leadsElsewhere(path, real, where)
	}
	b.mu.Lock()
	allowed, decided := b.decisions[real]
	b.mu.Unlock()
	if decided {
		if allowed {
			return r, nil
		}
		return r, refused(path, real, op, where)
	}
	if b.ask == nil {
		return r, refused(path, real, op, where)
	}
	shown := real
	if filepath.Clean(path) != real {
		shown = fmt.Sprintf("%s (%s)", path, real)
	}
	q := Question{
		Kind:  KindOutsideWorkspace,
		Where: where,
		Title: fmt.Sprintf("Allow the agent to %s %s? It is %s.", op, shown, where),
		Path:  real,
		Body: []string{
			fmt.Sprintf("The agent wants to %s a file %s (workspace: %s):", op, where, strings.Join(b.roots, ", ")),
			"  " + shown,
		},
		Options: []Option{
			{OptAllowOnce, "Allow once", "y"},
			{OptAllowAlways, "Always allow this file (this session)", "a"},
			{OptRejectOnce, "Reject", "n"},
			{OptRejectAlways, "Always reject this file (this session)", "N"},
		},
	}
	ans, err := b.ask.Ask(ctx, q)
	if err != nil {
		return r, reqErr(CodeCancelled, path, ReasonCancelled, "no answer from the user about %s (%s): %v", real, where, err)
	}
	switch ans {
	case OptAllowAlways:
		b.remember(real, true)
		return r, nil
	case OptAllowOnce:
		return r, nil
	case OptRejectAlways:
		b.remember(real, false)
	}
	return r, refused(path, real, op, where)
}

func (b *Bridge) remember(real string, allow bool) {
	b.mu.Lock()
	b.decisions[real] = allow
	b.mu.Unlock()
}

func refused(path, real, op, where string) error {
	return reqErr(CodeInternal, path, ReasonRefused, "the user refused to let the agent %s %s (%s)", op, real, where)
}

// state is what a file is now: its loaded buffer, or the disk.
type state struct {
	text    string
	exists  bool // on disk
	buf     *Buffer
	disk    fileState
	mode    fs.FileMode
	notText bool // (non-strict only) the disk content is binary or too large; text is ""
	// stale: buf is unmodified but its file changed on disk (text is the
	// disk's); shown is the buffer's text, what the user still sees.
	stale bool
	shown string
}

// current loads real's current content: its loaded buffer (unless the
// buffer is unmodified and stale: then the disk), else the disk, opened
// with openRegular. strict rejects non-text and oversized content;
// otherwise such content is reported with notText. ErrPathChanged is
// returned as is (the caller resolves and checks the path again).
func (b *Bridge) current(ctx context.Context, real string, strict bool) (state, error) {
	return b.currentAt(ctx, real, strict, nil)
}

// locateRead is where a read of path leads when locate finds a regular
// file there inside the workspace (nothing to ask): the first attempt only.
// check's other rules for reads (absolute, no trailing separator) hold
// for what locate accepts.
func (b *Bridge) locateRead(path string, attempt int, drained bool) (string, fs.FileInfo, bool) {
	if attempt > 1 || !filepath.IsAbs(path) || strings.HasSuffix(path, string(filepath.Separator)) {
		return "", nil, false
	}
	real, fi, known, ok := locateKnown(path, drained)
	if !ok {
		return "", nil, false
	}
	root, in := b.rootOf(real)
	if !in {
		return "", nil, false
	}
	if !known && real == path {
		learnPath(path, root) // watched from its root down
	}
	return real, fi, true
}

// currentAt is current with known, when not nil, the file at real as
// locate found it an instant ago: a loaded buffer's disk state, and a file
// whose text is cached, need no other system call.
func (b *Bridge) currentAt(ctx context.Context, real string, strict bool, known fs.FileInfo) (state, error) {
	var st state
	if b.ed != nil && noWait(ctx) {
		if known == nil {
			return st, ErrWouldWait
		}
		if st, done, err := b.heldBuffer(ctx, real, strict, stateOf(known)); done {
			return st, err
		}
	} else if b.ed != nil && (b.isLoaded(real) || b.loadsPending(ctx)) {
		var buf Buffer
		var ok bool
		var err error
		if vs, is := b.ed.(VersionSnapshotter); is && known != nil {
			buf, ok, err = vs.SnapshotAt(ctx, real, FileVersion{stateOf(known)})
		} else {
			buf, ok, err = b.ed.Snapshot(ctx, real)
		}
		if err != nil {
			if ctx.Err() != nil {
				return st, reqErr(CodeCancelled, real, ReasonCancelled, "request cancelled while reading the buffer of %s", real)
			}
			return st, reqErr(CodeInternal, real, ReasonEditorFailed, "cannot read the Neovim buffer of %s: %v", real, err)
		}
		if ok && (buf.Modified || !buf.Stale) {
			if known != nil {
				return b.bufferStateOf(real, buf, strict, stateOf(known))
			}
			return b.bufferState(real, buf, strict)
		}
		if ok {
			// Unmodified but stale: the agent gets the disk, read here
			// (verified); the buffer follows the disk for the user (see
			// reconcile), but its text never reaches the agent. A write
			// goes to the buffer.
			st.buf = &buf
			st.stale, st.shown = true, buf.Text()
		}
	}
	// known's cache key, and whether its version settled: once a read
	// (a clock read in it).
	var knownKey textcache.Key
	var knownSettled bool
	if known != nil && st.buf == nil && known.Size() <= b.cfg.MaxBytes {
		knownKey, knownSettled = b.cfg.Texts.Key(known)
		if knownSettled {
			if text, ok := b.cfg.Texts.Get(real, knownKey); ok {
				st.exists = true
				st.disk = stateOf(known)
				st.mode = known.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
				st.text = text // checked when it was cached
				return st, nil
			}
		}
	}
	if noWait(ctx) {
		// Not held: a small file whose bytes are in memory now is read
		// here; any other by a worker (a large or slow file must not hold
		// up the agent's other messages).
		if known != nil && st.buf == nil && known.Size() <= b.cfg.MaxBytes {
			if st, ok := b.youngRead(real, known, knownKey, knownSettled); ok {
				return st, nil
			}
			if st, ok := b.readNow(real, known); ok {
				return st, nil
			}
		}
		return st, ErrWouldWait
	}
	f, fi, err := openRegular(real)
	if err != nil {
		var nr *notRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist) && st.buf != nil:
			return b.bufferState(real, *st.buf, strict) // deleted: the buffer has the text
		case errors.Is(err, fs.ErrNotExist):
			return st, nil
		case errors.Is(err, ErrPathChanged):
			return st, err
		case errors.As(err, &nr) && nr.Mode.IsDir():
			return st, reqErr(CodeInvalidParams, real, ReasonIsDir, "is a directory, not a file: %s", real)
		case errors.As(err, &nr):
			return st, notRegular(real, nr.Mode)
		}
		return st, osErr(real, err)
	}
	defer f.Close()
	st.exists = true
	st.disk = stateOf(fi)
	st.mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	var data []byte
	if st.buf != nil {
		// The stale buffer: taken as the file's again when it holds
		// exactly the bytes read, else brought in step (reconcile, which
		// shows the change as the disk's): at once for a read, so the
		// user sees what the agent read and a :write of the buffer right
		// after does not find the file changed; by the watcher otherwise
		// (a write brings the buffer in step itself).
		defer func(buf Buffer) {
			if data == nil || !b.confirm(ctx, real, buf, st.disk, data) {
				if strict && ctx.Value(readKey{}) != nil {
					b.reconcile(ctx, real)
				} else {
					b.w.refresh(real)
				}
			}
		}(*st.buf)
		st.buf.Stale = false
	}
	key, cacheable := b.cfg.Texts.Key(fi)
	cacheable = cacheable && st.buf == nil
	if cacheable && fi.Size() <= b.cfg.MaxBytes {
		if text, ok := b.cfg.Texts.Get(real, key); ok {
			st.text = text // checked when it was cached
			return st, nil
		}
	}
	if fi.Size() > b.cfg.MaxBytes {
		if strict {
			return st, tooLarge(real, fi.Size(), b.cfg.MaxBytes)
		}
		st.notText = true
		return st, nil
	}
	data, err = readCapped(f, fi.Size(), b.cfg.MaxBytes)
	if err != nil {
		return st, osErr(real, err)
	}
	if int64(len(data)) > b.cfg.MaxBytes {
		if strict {
			return st, tooLarge(real, int64(len(data)), b.cfg.MaxBytes)
		}
		st.notText = true
		return st, nil
	}
	st.text = ownedString(data) // data is never written again
	if err := b.checkText(real, st.text); err != nil {
		if strict {
			return st, err
		}
		st.notText = true
		st.text = ""
		return st, nil
	}
	if cacheable {
		b.cfg.Texts.Put(real, key, st.text)
	}
	return st, nil
}

// readNow is currentAt's disk step for a read under WithNoWait: the file
// at real, which locate found as known and no buffer holds, read if that
// needs no wait (see readNow in readnow_linux.go). A text read before and
// unchanged since is the string kept in the Texts cache, so its encoding
// is reused too; a file younger than textcache.Settle is kept there only
// for that (PutYoung): its version alone cannot tell a change, its bytes
// do. ok is false when the read would wait or the text is not one to serve
// (binary: a worker reports it).
func (b *Bridge) readNow(real string, known fs.FileInfo) (state, bool) {
	var st state
	data, fi, release, ok := readNow(real, known)
	if !ok {
		return st, false
	}
	defer release()
	text, kept := b.cfg.Texts.Match(real, data)
	if !kept {
		text = string(data)
	}
	if b.checkText(real, text) != nil {
		return st, false
	}
	if key, settled := b.cfg.Texts.Key(fi); settled {
		if _, ok := b.cfg.Texts.Get(real, key); !ok {
			b.cfg.Texts.Put(real, key, text) // as a worker's read would
		}
	} else if gen := knownGen(known); gen != 0 {
		// Read after the known path's generation began: while it lasts,
		// nothing has written the file (youngRead).
		b.cfg.Texts.PutYoungAt(real, key, text, gen)
	} else if !kept {
		b.cfg.Texts.PutYoung(real, key, text)
	}
	st.exists = true
	st.disk = stateOf(fi)
	st.mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	st.text = text
	return st, true
}

// youngRead is a file too young for its version to tell a change
// (textcache.Settle), answered without reading it: its path is known
// (pathcache) in the same generation as when readNow last read it, after
// that generation began. inotify reported no change to the file since:
// the text read is the file's still. What inotify does not see (a write
// through a shared mmap) is bounded by pathcache.Trust, as where the path
// leads is. key and settled are Texts.Key(known).
func (b *Bridge) youngRead(real string, known fs.FileInfo, key textcache.Key, settled bool) (state, bool) {
	var st state
	gen := knownGen(known)
	if gen == 0 {
		return st, false
	}
	if settled || key == (textcache.Key{}) {
		return st, false
	}
	text, ok := b.cfg.Texts.GetYoung(real, key, gen)
	if !ok {
		return st, false
	}
	st.exists = true
	st.disk = stateOf(known)
	st.mode = known.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	st.text = text // checked when it was read
	b.youngHits.Add(1)
	return st, true
}

// loadsPending reports whether the editor may hold buffers loaded that the
// bridge was not told of yet (see LoadChecker).
func (b *Bridge) loadsPending(ctx context.Context) bool {
	lc, ok := b.ed.(LoadChecker)
	return ok && lc.LoadsPending(ctx)
}

// confirm tells an Editor that is a Confirmer that buf, reported stale,
// holds exactly data, the content of real's file in version disk.
func (b *Bridge) confirm(ctx context.Context, real string, buf Buffer, disk fileState, data []byte) bool {
	c, ok := b.ed.(Confirmer)
	if !ok || buf.Modified || buf.Text() != string(data) {
		return false
	}
	return c.Confirm(ctx, real, buf, FileVersion{disk})
}

// bufferState is the state of real given by its loaded buffer.
func (b *Bridge) bufferState(real string, buf Buffer, strict bool) (state, error) {
	return b.bufferStateOf(real, buf, strict, statFile(real))
}

// bufferStateOf is bufferState with the file's disk state known.
func (b *Bridge) bufferStateOf(real string, buf Buffer, strict bool, disk fileState) (state, error) {
	st := state{buf: &buf, text: buf.Text(), disk: disk}
	st.exists = st.disk.Exists
	if err := b.checkText(real, st.text); err != nil {
		if strict {
			return st, err
		}
		st.notText = true
	}
	return st, nil
}

func notRegular(path string, m fs.FileMode) error {
	return reqErr(CodeInvalidParams, path, ReasonNotRegular,
		"%s is a %s, not a regular file: the agent can only read and write regular files", path, fileKind(m))
}

func pathChanged(path string) error {
	return reqErr(CodeInternal, path, ReasonPathChanged,
		"%s kept changing (a symlink or directory on its path was replaced) while it was being opened; nothing was read or written", path)
}

func (b *Bridge) checkText(path, text string) error {
	if int64(len(text)) > b.cfg.MaxBytes {
		return tooLarge(path, int64(len(text)), b.cfg.MaxBytes)
	}
	if b.checked.seen(path, text) {
		return nil
	}
	if strings.IndexByte(text, 0) >= 0 {
		return reqErr(CodeInvalidParams, path, ReasonBinary, "binary file (contains NUL bytes), not text: %s", path)
	}
	if !utf8.ValidString(text) {
		return reqErr(CodeInvalidParams, path, ReasonBinary, "not UTF-8 text (binary file?): %s", path)
	}
	b.checked.remember(path, text)
	return nil
}

func tooLarge(path string, size, max int64) error {
	return reqErr(CodeInvalidParams, path, ReasonTooLarge, "file too large: %s is %d bytes, the limit is %d", path, size, max)
}

// maxPathAttempts bounds how often one request resolves, checks and opens
// its path again when the path changes under it.
const maxPathAttempts = 3

// ReadTextFile implements fs/read_text_file.
func (b *Bridge) ReadTextFile(ctx context.Context, req acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	var resp acp.ReadTextFileResponse
	if (req.Line != nil && *req.Line < 0) || (req.Limit != nil && *req.Limit < 0) {
		return resp, reqErr(CodeInvalidParams, req.Path, ReasonBadRange, "line and limit must not be negative (reading %s)", req.Path)
	}
	for attempt := 1; ; attempt++ {
		// An existing file in the workspace, as the kernel finds it (the
		// common read), else the path resolved and checked step by step.
		real, known, ok := b.locateRead(req.Path, attempt, drainedFor(ctx))
		if !ok && noWait(ctx) {
			return resp, ErrWouldWait // check may ask the user
		}
		if !ok {
			r, err := b.check(ctx, req.Path, "read")
			if err != nil {
				return resp, err
			}
			real = r.Path
			if r.Phantom { // "missing/..": the OS finds nothing there
				if b.cfg.MissingAsEmpty {
					return resp, nil
				}
				return resp, reqErr(CodeResourceNotFound, real, ReasonNotFound, "file not found: %s (the path goes through a missing directory)", req.Path)
			}
		}
		rctx := ctx
		if rctx.Value(readKey{}) == nil { // WithNoWait's is one already
			rctx = context.WithValue(ctx, readKey{}, true)
		}
		st, err := b.currentAt(rctx, real, true, known)
		if errors.Is(err, ErrPathChanged) {
			if attempt < maxPathAttempts {
				continue
			}
			return resp, pathChanged(real)
		}
		if err != nil {
			return resp, err
		}
		if !st.exists && st.buf == nil && !b.cfg.MissingAsEmpty {
			return resp, reqErr(CodeResourceNotFound, real, ReasonNotFound, "file not found: %s", real)
		}
		if st.exists && noWait(ctx) && !b.w.tracked(real, reasonAgent) {
			return resp, ErrWouldWait // track would read the file's text
		}
		b.mu.Lock()
		tick := 0
		if st.buf != nil {
			tick = st.buf.Tick
		}
		if !unseen(ctx) {
			b.snaps[real] = snapshot{text: st.text, tick: tick, state: st.disk}
		}
		if _, ok := b.originals[real]; !ok {
			b.originals[real] = Change{Path: real, Original: st.text, Existed: st.exists}
		}
		b.mu.Unlock()
		if st.exists {
			b.w.track(real, reasonAgent)
		}
		resp.Content, err = sliceLines(real, st.text, req.Line, req.Limit)
		return resp, err
	}
}

// sliceLines returns limit lines of text from the 1-based line, each with its
// newline. nil or 0 line means 1; nil or 0 limit means to the end.
func sliceLines(path, text string, line, limit *int) (string, error) {
	start := 1
	if line != nil && *line > 0 {
		start = *line
	}
	n := 0
	if limit != nil {
		n = *limit
	}
	if start == 1 && n == 0 {
		return text, nil
	}
	// Byte offset of the start of line `start`.
	off := 0
	count := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		count++
	}
	if start > count && start != 1 {
		return "", reqErr(CodeInvalidParams, path, ReasonLinePastEnd,
			"line %d is past the end of %s, which has %d lines", start, path, count)
	}
	for l := 1; l < start; l++ {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	if n == 0 {
		return text[off:], nil
	}
	end := off
	for l := 0; l < n && end < len(text); l++ {
		i := strings.IndexByte(text[end:], '\n')
		if i < 0 {
			end = len(text)
			break
		}
		end += i + 1
	}
	return text[off:end], nil
}

func (b *Bridge) pathLock(p string) *sync.Mutex {
	b.mu.Lock()
	defer b.mu.Unlock()
	m, ok := b.locks[p]
	if !ok {
		m = &sync.Mutex{}
		b.locks[p] = m
	}
	return m
}

// readKey marks the context of an agent's read (see current).
type readKey struct{}

// unseenKey marks a read whose text the agent never sees (see WithUnseen).
type unseenKey struct{}

// WithUnseen makes ReadTextFile calls with the returned context reads
// made for the agent whose text it never sees (the editor's MCP edit_file
// reads the file to make its edit): they do not change what the bridge
// takes as the agent's view of the file, its next write's merge base.
func WithUnseen(ctx context.Context) context.Context {
	return context.WithValue(ctx, unseenKey{}, true)
}

func unseen(ctx context.Context) bool {
	v, _ := ctx.Value(unseenKey{}).(bool)
	return v
}

// editKey carries the text an edit was made from (see WithEditOf).
type editKey struct{}

// WithEditOf makes WriteTextFile calls with the returned context edits
// made from before, a text of the file the agent never saw (the editor's
// MCP edit_file replaces a string in the file as it is): the content is
// merged against before, and the agent's view of the file afterwards is
// its previous view (its last read or write, else the disk) with the edit
// made, not the content, which may hold the user's unsaved lines.
func WithEditOf(ctx context.Context, before string) context.Context {
	return context.WithValue(ctx, editKey{}, before)
}

func editOf(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(editKey{}).(string)
	return s, ok
}

// proposalKey marks a write the user proposes (a code block applied from
// the chat): its content is based on the file as it is now, so nothing is
// merged, and it is always shown for review first, under its own title.
type proposalKey struct{}

// WithProposal makes WriteTextFile calls with the returned context user
// proposals: reviewed first (title heads the review), never merged.
func WithProposal(ctx context.Context, title string) context.Context {
	return context.WithValue(ctx, proposalKey{}, title)
}

// proposal is the review title of a user proposal, or "".
func proposal(ctx context.Context) string {
	t, _ := ctx.Value(proposalKey{}).(string)
	return t
}

// answerKey carries the function that answers the agent's write (see
// WithAnswer).
type answerKey struct{}

// WithAnswer makes a WriteTextFile with the returned context call answer
// as soon as the write cannot fail any more (the buffer and the file hold
// it), before Neovim is told the file's new version, the change is
// reported to the sink and any note shown to the user: the caller answers
// the agent then, and not again when WriteTextFile returns nil. answer
// must not block (the file's lock is held). Settle waits until the writes
// answered so are reported.
func WithAnswer(ctx context.Context, answer func()) context.Context {
	return context.WithValue(ctx, answerKey{}, answer)
}

// earlyAnswer is one write's answer under WithAnswer, given at most once
// as soon as the write cannot fail any more: once the file holds it and
// before Neovim is told the file's new version (applyUnsaved), or else
// once it is applied. The write is recorded first (what the agent knows
// of the file, its original), so that a read the answer lets through
// finds it recorded.
type earlyAnswer struct {
	b      *Bridge
	answer func()
	record func(diskBefore string)
	given  bool
}

// earlyKey carries a write's *earlyAnswer into its apply.
type earlyKey struct{}

// earlyOf is ctx's early answer (nil: none).
func earlyOf(ctx context.Context) *earlyAnswer {
	a, _ := ctx.Value(earlyKey{}).(*earlyAnswer)
	return a
}

// give records the write with diskBefore (the file's text before it) and
// answers the agent, once; Settle then waits for reported.
func (a *earlyAnswer) give(diskBefore string) {
	if a == nil || a.given {
		return
	}
	a.given = true
	a.record(diskBefore)
	a.b.unreported.RLock()
	a.answer()
}

// reported ends what Settle waits for of an answer given.
func (a *earlyAnswer) reported() {
	if a != nil && a.given {
		a.b.unreported.RUnlock()
	}
}

// Settle waits until every write answered early (WithAnswer) so far has
// been reported to the sink: what the agent was told is written is then
// in the sink's record (a turn's end is taken after it).
func (b *Bridge) Settle() {
	b.unreported.Lock()
	//lint:ignore SA2001 taking the lock is the wait: nothing is guarded
	b.unreported.Unlock()
}

// WriteTextFile implements fs/write_text_file.
func (b *Bridge) WriteTextFile(ctx context.Context, req acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	var resp acp.WriteTextFileResponse
	for attempt := 1; ; attempt++ {
		r, err := b.check(ctx, req.Path, "write")
		if err != nil {
			return resp, err
		}
		if origin(ctx) == ByUser {
			b.userWrites(r.Path)
		}
		err = b.write(ctx, r, req.Content)
		if errors.Is(err, ErrPathChanged) {
			if attempt < maxPathAttempts {
				continue
			}
			return resp, pathChanged(r.Path)
		}
		return resp, err
	}
}

// write writes content to the checked resolution r.
func (b *Bridge) write(ctx context.Context, r resolution, content string) error {
	real := r.Path
	if r.Phantom {
		return reqErr(CodeInvalidParams, real, ReasonNotFound,
			"cannot create a file through a missing directory followed by \"..\" (the OS would not either): give the path without it, %s", real)
	}
	if int64(len(content)) > b.cfg.MaxBytes {
		return reqErr(CodeInvalidParams, real, ReasonTooLarge, "content too large for %s: %d bytes, the limit is %d", real, len(content), b.cfg.MaxBytes)
	}
	if strings.IndexByte(content, 0) >= 0 || !utf8.ValidString(content) {
		return reqErr(CodeInvalidParams, real, ReasonBinary, "content for %s is not UTF-8 text", real)
	}
	// Mostly the buffer's text after the write (the host keeps this very
	// string): the next write or read of it need not scan it again.
	b.checked.remember(real, content)
	mu := b.pathLock(real)
	mu.Lock()
	defer mu.Unlock()
	for attempt := 0; ; attempt++ {
		err := b.writeOnce(ctx, r, content)
		if errors.Is(err, ErrBufferChanged) {
			if attempt < 3 {
				continue
			}
			return reqErr(CodeInternal, real, ReasonBufferChanging, "the buffer of %s kept changing while the edit was applied; nothing was written", real)
		}
		return err
	}
}

// writeOnce writes content to r's file once, from the file's current
// state (its buffer if loaded, else the disk): the agent's content is
// merged with what changed since the agent read the file (asking the user
// where the two overlap), reviewed when the write mode or a proposal asks
// for it, applied to the buffer or the disk, then recorded (what the agent
// has seen, the change to review, the session's written files) and
// reported. ErrBufferChanged means the buffer changed under the write and
// the caller may try again; other errors are the agent's answer.
func (b *Bridge) writeOnce(ctx context.Context, r resolution, content string) error {
	real := r.Path
	st, err := b.current(ctx, real, false)
	if err != nil {
		return err
	}
	before, isEdit := editOf(ctx)
	m, err := b.mergeWrite(ctx, real, st, content, before, isEdit)
	if err != nil {
		return err
	}
	by, err := b.reviewWrite(ctx, real, st, m.text)
	if err != nil {
		return err
	}
	b.catchUpDisk(real, st)
	b.willWrite(ctx, real)
	recorded := false
	record := func(diskBefore string) {
		recorded = true
		b.recordWrite(ctx, real, st, content, diskBefore, before, isEdit)
		b.w.track(real, reasonAgent)
	}
	actx := ctx
	var early *earlyAnswer
	if answer, ok := ctx.Value(answerKey{}).(func()); ok && len(m.kept) == 0 {
		early = &earlyAnswer{b: b, answer: answer, record: record}
		actx = context.WithValue(ctx, earlyKey{}, early)
	}
	diskBefore, err := b.applyWrite(actx, r, st, m, content)
	if err != nil {
		return err
	}
	if !recorded {
		record(diskBefore)
	}
	// The write has succeeded. The chat's note comes first: said after
	// the answer, it could come after the turn's end.
	if m.note != "" && b.ed != nil {
		b.ed.Warn(ctx, m.note)
	}
	// The agent has its answer (if it has not yet) while the change is
	// reported.
	early.give(diskBefore)
	if !st.notText {
		before := FileText{Text: st.text, Exists: st.exists}
		if st.buf != nil {
			before = FileText{Text: st.buf.Text(), Exists: true}
		}
		var lines []string // m.text's lines, where they are m.lines
		if st.buf.lineEnding() == "\n" {
			lines = m.lines
		}
		b.reportLines(real, before, FileText{Text: m.text, Exists: true}, lines, m.eol, by)
	}
	early.reported()

	if len(m.kept) > 0 {
		return reqErr(CodeInternal, real, ReasonKeptMine,
			"the user kept their version of %s of %s, where their edits overlap yours; your other changes were applied. Read the file again before editing it",
			describeRanges(m.kept), real)
	}
	return nil
}

// mergedWrite is what a write puts in place of a file's current text.
type mergedWrite struct {
	lines []string        // the result as the buffer's lines
	eol   bool            // the result ends with a line end
	text  string          // the result as text, with the buffer's line ends
	kept  []mergeConflict // overlaps where the user kept their version
	note  string          // a merge to tell the user about ("": none)
}

// mergeWrite merges the agent's content for real with st, its current
// state: with nothing to merge (the user's writes, no base, or a file
// unchanged since its base) content replaces st.text; otherwise the
// changes since the base (before for an edit, else mergeBase's) are
// merged three-way, and the user chooses where they overlap.
func (b *Bridge) mergeWrite(ctx context.Context, real string, st state, content, before string, isEdit bool) (mergedWrite, error) {
	// Lines as the buffer holds them (a CRLF buffer's lines have no "\r").
	sep := st.buf.lineEnding()
	var theirs []string
	var theirsEOL bool
	if st.buf != nil && sep == "\n" && st.text == st.buf.Text() {
		// Mostly the buffer's lines: only the changed ones are split.
		mine, _ := linesOf(st.text, sep, st.buf.Text(), st.buf.Lines, st.buf.EOL)
		theirs, theirsEOL = SplitAgainst(content, st.text, mine)
	} else {
		theirs, theirsEOL = splitText(content, sep)
	}
	m := mergedWrite{text: content}
	baseText, kind := "", baseNone
	switch {
	case proposal(ctx) != "" || origin(ctx) == ByUser:
		// The user's writes are based on the file as it is now: nothing
		// to merge.
	case isEdit && (st.exists || st.buf != nil) && !st.notText:
		baseText, kind = before, baseRead
	default:
		var err error
		baseText, kind, err = b.mergeBase(real, content, st)
		if err != nil {
			return m, err
		}
	}
	if kind == baseNone || baseText == st.text {
		// Nothing to merge: the agent's content replaces what is there.
		m.lines, m.eol = theirs, theirsEOL
		if sep != "\n" { // the buffer writes its own line ends
			m.text = joinText(m.lines, m.eol, sep)
		}
		return m, nil
	}
	ours, oursEOL := splitText(st.text, sep)
	base, baseEOL := splitText(baseText, sep)
	m.eol = theirsEOL
	if theirsEOL == baseEOL && len(ours) > 0 && len(base) > 0 {
		m.eol = oursEOL
	}
	var conflicts []mergeConflict
	m.lines, conflicts = merge3(base, ours, theirs, false)
	if len(conflicts) > 0 {
		take, _ := merge3(base, ours, theirs, true)
		unsaved := st.buf != nil && st.buf.Modified
		choice, err := b.askConflict(ctx, real, st.text, joinText(take, m.eol, sep), conflicts, unsaved, false)
		if err != nil {
			return m, err
		}
		if choice == OptTakeAgent {
			m.lines = take
		} else {
			m.kept = conflicts
		}
	} else {
		m.note = mergeNote(real, kind)
	}
	m.text = joinText(m.lines, m.eol, sep)
	return m, nil
}

// reviewWrite asks the user to review the write of text over st.text when
// the write mode is review (for the agent's writes) or ctx carries a
// proposal, and the text changes. It returns who the write is by: the
// agent's reviewed writes are ByApproved.
func (b *Bridge) reviewWrite(ctx context.Context, real string, st state, text string) (int, error) {
	by := origin(ctx)
	if (b.cfg.WriteMode == WriteReview && by != ByUser || proposal(ctx) != "") && text != st.text {
		if err := b.askReview(ctx, real, st.text, text); err != nil {
			return by, err
		}
		if by == ByAgent {
			by = ByApproved
		}
	}
	return by, nil
}

// catchUpDisk reports the change of real on disk behind its unmodified
// buffer that the buffer has not followed yet (st.stale), so that it comes
// before the write's own change.
func (b *Bridge) catchUpDisk(real string, st state) {
	if st.stale && !st.notText && st.shown != st.text {
		b.report(real, FileText{Text: st.shown, Exists: true}, FileText{Text: st.text, Exists: st.exists}, ByDisk)
	}
}

// applyWrite puts m in place of r's file, within the watcher's
// beginWrite/endWrite: into its buffer when one is loaded (leaving the
// buffer's unsaved lines unsaved, see applyUnsaved), else onto the disk.
// It returns the file's text before the write, as far as known. Errors
// are the agent's answer, except ErrBufferChanged and ErrPathChanged.
func (b *Bridge) applyWrite(ctx context.Context, r resolution, st state, m mergedWrite, content string) (string, error) {
	real := r.Path
	diskBefore := st.text // the file's text before the write, as far as known
	b.w.beginWrite(real)
	if st.buf == nil {
		return diskBefore, b.writeDisk(r, m.text)
	}
	diskNew := m.text // what the file holds after the write
	target, tEOL := m.lines, m.eol
	if len(target) == 0 {
		target, tEOL = []string{""}, false
	}
	ue, canPut := b.ed.(UnsavedEditor)
	var disk diskText
	if st.buf.Modified && canPut && !st.notText {
		disk = b.diskNow(real)
		if disk.ok {
			diskBefore = disk.text
		}
	}
	var err error
	ended := false
	var written FileVersion
	end := func(text string, ok bool) FileVersion {
		if !ended {
			ended = true
			written = FileVersion{b.w.endWrite(real, text, ok)}
		}
		return written
	}
	if disk.ok {
		// The buffer has unsaved lines: they stay unsaved (see
		// applyUnsaved).
		diskNew, err = b.applyUnsaved(ctx, r, st, ue, disk, content, target, tEOL, m.text, end)
	} else {
		err = apply(ctx, b.ed, real, st.buf, target, tEOL, m.text)
	}
	end(diskNew, err == nil)
	if err != nil {
		var re *acp.RequestError
		if errors.Is(err, ErrBufferChanged) || errors.Is(err, ErrPathChanged) || errors.As(err, &re) {
			return diskBefore, err
		}
		if errors.Is(err, ErrNotRegular) {
			return diskBefore, reqErr(CodeInvalidParams, real, ReasonNotRegular, "%s is not a regular file: the agent can only read and write regular files", real)
		}
		return diskBefore, reqErr(CodeInternal, real, ReasonEditorFailed, "cannot apply the edit to the Neovim buffer of %s: %v", real, err)
	}
	return diskBefore, nil
}

// writeDisk writes text to r's file, which has no buffer, and ends the
// watcher's write; the error is the agent's answer (ErrPathChanged as is).
func (b *Bridge) writeDisk(r resolution, text string) error {
	real := r.Path
	err := writeRegular(r, text, 0o644)
	b.w.endWrite(real, text, err == nil)
	var nr *notRegularError
	switch {
	case errors.Is(err, ErrPathChanged):
		return err
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return reqErr(CodeInvalidParams, real, ReasonIsDir, "is a directory, not a file: %s", real)
	case errors.As(err, &nr):
		return notRegular(real, nr.Mode)
	case err != nil:
		return osErr(real, err)
	}
	return nil
}

// recordWrite records a write of content to real: what the agent now
// knows of the file (for an edit, its change applied to what it had seen,
// or to diskBefore), the file's original for review (st, its state before
// the write), and real among the session's written files.
func (b *Bridge) recordWrite(ctx context.Context, real string, st state, content, diskBefore, before string, isEdit bool) {
	seen := content // what the agent knows of the file now
	if isEdit {
		b.mu.Lock()
		prev, hasPrev := b.snaps[real]
		b.mu.Unlock()
		view := diskBefore
		if hasPrev {
			view = prev.text
		}
		seen = applyChange(before, view, content)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.snaps[real] = snapshot{text: seen, state: statFile(real)}
	delete(b.announced, real)
	c, ok := b.originals[real]
	if !ok {
		c = Change{Path: real, Original: st.text, Existed: st.exists}
	}
	if proposal(ctx) != "" {
		c.ByUser = true
	} else {
		c.ByAgent = true
	}
	b.originals[real] = c
	if !slices.Contains(b.written, real) {
		b.written = append(b.written, real)
	}
}

// diskNow is real's text on disk now (readDiskText), not read again when
// the bridge put that text in place itself last and nothing has changed
// the file since (see written.Memo): a write into a buffer with unsaved
// lines merges its change into the disk's text, and the one before it
// mostly wrote that text.
func (b *Bridge) diskNow(real string) diskText {
	if text, info, ok := b.own.Get(real); ok {
		b.ownHits.Add(1)
		return diskText{state: fileState{Exists: true, Size: info.Size, MTime: info.MTime, Ino: info.Ino}, text: text, ok: true}
	}
	return readDiskText(real, b.cfg.MaxBytes)
}

// applyUnsaved writes a change into real's buffer (st.buf), which has
// unsaved lines, without saving them: the buffer gets the change (from its
// text to text, target as lines) as one undo step, unwritten; the file
// gets the change applied to its own text on disk (disk, as just read; a
// missing file gets the agent's content), written atomically; and Neovim
// takes the buffer as read from that new version. The buffer ends holding
// target, modified where it has lines the disk lacks. Where the change
// overlaps lines the disk and the buffer hold differently (the agent
// changed an unsaved line), the disk gets the change's version of those
// lines. The buffer is changed first (with a SavedEditor, while the
// file's new text is merged): a user typing meanwhile makes it fail with
// ErrBufferChanged before anything is written. end ends the watcher's
// write (see putAndWrite). It returns the file's new text.
func (b *Bridge) applyUnsaved(ctx context.Context, r resolution, st state, ue UnsavedEditor, disk diskText, content string, target []string, eol bool, text string, end func(text string, ok bool) FileVersion) (string, error) {
	real := r.Path
	if text == st.text {
		return disk.text, nil // nothing of the change is left (the user kept theirs)
	}
	put := func() error { return putUnsaved(ctx, ue, real, st.buf, target, eol, text) }
	se, saved := ue.(SavedEditor)
	if saved {
		// The buffer takes the change (a round trip into Neovim) while
		// the disk's text is merged: the put needs only target. Its
		// result is awaited before the file is touched (putAndWrite).
		done := make(chan error, 1)
		go func() { done <- putUnsaved(ctx, ue, real, st.buf, target, eol, text) }()
		put = func() error { return <-done }
	}
	sep := st.buf.lineEnding()
	var diskNew string
	apart := false
	if disk.state.Exists && sep == "\n" {
		// Mostly the change and the unsaved lines are apart: the change
		// is spliced into the disk's text, no lines split or diffed.
		diskNew, apart = mergeApart(st.text, disk.text, text)
	}
	switch {
	case apart:
	case disk.state.Exists:
		mine, mineEOL := linesOf(st.text, sep, st.buf.Text(), st.buf.Lines, st.buf.EOL)
		var ours []string
		var oursEOL bool
		if sep == "\n" {
			ours, oursEOL = SplitAgainst(disk.text, st.text, mine) // mostly the buffer's lines
		} else {
			ours, oursEOL = splitText(disk.text, sep)
		}
		theirs, theirsEOL := linesOf(text, sep, text, target, eol)
		onDisk, _ := merge3(mine, ours, theirs, true)
		diskEOL := oursEOL
		if mineEOL != theirsEOL {
			diskEOL = theirsEOL
		}
		if sep == "\n" {
			// disk.text is ours joined: only the change is joined anew.
			diskNew = spliceText(disk.text, ours, oursEOL, onDisk, diskEOL, sep)
		} else {
			diskNew = joinText(onDisk, diskEOL, sep)
		}
	default:
		onDisk, diskEOL := splitText(content, sep)
		diskNew = joinText(onDisk, diskEOL, sep)
	}
	took := ue.Took
	if diskNew == text {
		// The buffer's unsaved lines were all the agent's change: the
		// buffer is the file, saved.
		if !saved {
			return diskNew, apply(ctx, b.ed, real, st.buf, target, eol, text)
		}
		took = se.TookSaved
	}
	putErr, err := putAndWrite(r, diskNew, put,
		func(ok bool) FileVersion { return end(diskNew, ok) },
		func(v FileVersion) error {
			// The file and the buffer hold the change: the agent may
			// have its answer while Neovim takes the file's new version.
			earlyOf(ctx).give(disk.text)
			return took(ctx, real, st.buf.Bufnr, v)
		}, &b.own, &b.syncs, b.log)
	if putErr != nil {
		return disk.text, putErr
	}
	if err != nil {
		var nr *notRegularError
		switch {
		case errors.As(err, &nr):
			return disk.text, notRegular(real, nr.Mode)
		case errors.Is(err, ErrPathChanged):
			err = errors.New("the path changed as it was written")
		}
		return disk.text, reqErr(CodeInternal, real, ReasonIO,
			"your edit is in the Neovim buffer of %s (unsaved), but the file could not be written: %v", real, err)
	}
	return diskNew, nil
}

// putAndWrite makes one change to a buffer and to its file r: put gives
// the buffer the change while the file's new text, diskNew, goes to a temp
// file beside it (written and synced: most of the write's time); the temp
// file replaces the file only once the buffer has the change, and took
// tells Neovim the file's new version. The directory's sync, which makes
// the rename durable, runs on in syncs after putAndWrite returns: the
// write is answered as Neovim's own :write is, once the file holds the
// text (fsynced) in its place; a crash just after it may still find the
// file's old version, whole, as with :write, which never syncs the
// directory. end ends the watcher's write on every path, and returns the
// file's version it took: right after the rename, so that a change after
// it is another's, even before took gives that version to Neovim. A put
// that fails (the user typing) leaves the file as it was, the temp file
// removed: its error is putErr. err is the file's write failing after the
// buffer took the change; took's own error is only logged. own remembers
// diskNew as the file's text once it is in place (Bridge.diskNow).
func putAndWrite(r resolution, diskNew string, put func() error, end func(ok bool) FileVersion, took func(FileVersion) error,
	own *written.Memo, syncs *sync.WaitGroup, log *slog.Logger) (putErr, err error) {
	type prepared struct {
		w   *pendingWrite
		err error
	}
	ready := make(chan prepared, 1)
	go func() {
		w, err := prepareRegular(r, diskNew, 0o644)
		if err == nil {
			w.watch(own)
		}
		ready <- prepared{w, err}
	}()
	if err := put(); err != nil {
		if p := <-ready; p.err == nil {
			p.w.abort()
			p.w.sync()
		}
		end(false)
		return err, nil
	}
	p := <-ready
	if p.err != nil {
		end(false)
		return nil, p.err
	}
	if err := p.w.commit(); err != nil {
		p.w.sync()
		end(false)
		return nil, err
	}
	p.w.keep(diskNew)
	v := end(true)
	syncs.Add(1)
	go func() {
		defer syncs.Done()
		p.w.sync()
	}()
	if err := took(v); err != nil {
		log.Debug("fsbridge: buffer not told of its file's new version", "path", r.Path, "err", err)
	}
	return nil, nil
}

// applyChange is the change from before to after made to text: where it
// overlaps text's own changes of before, the change's lines win.
func applyChange(before, text, after string) string {
	b, bEOL := splitLines(before)
	t, tEOL := splitLines(text)
	a, aEOL := splitLines(after)
	merged, _ := merge3(b, t, a, true)
	eol := tEOL
	if bEOL != aEOL {
		eol = aEOL
	}
	return joinLines(merged, eol)
}

func describeRanges(cs []mergeConflict) string {
	var parts []string
	for _, c := range cs {
		switch {
		case c.Count == 0:
			parts = append(parts, fmt.Sprintf("the lines they deleted at line %d", c.Start+1))
		case c.Count == 1:
			parts = append(parts, fmt.Sprintf("line %d", c.Start+1))
		default:
			parts = append(parts, fmt.Sprintf("lines %d-%d", c.Start+1, c.Start+c.Count))
		}
	}
	return strings.Join(parts, ", ")
}

// askConflict asks which side wins where the agent's change (its write, or
// onDisk a change on disk) overlaps the user's.
func (b *Bridge) askConflict(ctx context.Context, real, cur, take string, cs []mergeConflict, unsaved, onDisk bool) (string, error) {
	if b.ask == nil {
		return OptKeepMine, nil
	}
	keep := "Keep mine: your version of those lines stays, the agent's other changes are applied, and the file is saved."
	keepLabel := "Keep mine"
	takeLine := "Take the agent's version: its lines replace yours there, and the file is saved."
	if unsaved {
		keep = "Keep mine: your version of those lines stays, the agent's other changes are applied; your unsaved edits stay unsaved (the disk gets the agent's changes only)."
		takeLine = "Take the agent's version: its lines replace yours there; your other unsaved edits stay unsaved."
	}
	what := fmt.Sprintf("The agent's edit of %s overlaps changes made since the agent read it, at %s.", real, describeRanges(cs))
	title := fmt.Sprintf("The agent's edit conflicts with your changes to %s", real)
	takeLabel := "Take the agent's version"
	if onDisk {
		what = fmt.Sprintf("%s changed on disk (the agent's own tools, a command or another program) where its buffer has your changes, at %s.", real, describeRanges(cs))
		takeLine = "Take the disk's version: its lines replace yours there in the buffer."
		keep = "Keep mine: your version of those lines stays in the buffer (unsaved), the disk's other changes are merged in; the disk keeps its version until you write the buffer."
		keepLabel = "Keep mine (in the buffer, unsaved)"
		title = fmt.Sprintf("%s changed on disk where you changed it too", real)
		takeLabel = "Take the disk's version"
	}
	body := []string{
		what,
		takeLine,
		keep,
		"Open a diff: see both side by side first.",
		"",
	}
	body = append(body, strings.Split(strings.TrimSuffix(UnifiedDiff(real, cur, take), "\n"), "\n")...)
	q := Question{
		Kind:  KindConflict,
		Title: title,
		Path:  real,
		Body:  body,
		Old:   cur,
		New:   take,
		Options: []Option{
			{OptTakeAgent, takeLabel, "a"},
			{OptKeepMine, keepLabel, "k"},
			{OptOpenDiff, "Open a diff", "d"},
		},
	}
	for i := 0; ; i++ {
		ans, err := b.ask.Ask(ctx, q)
		if err != nil {
			if onDisk {
				return "", fmt.Errorf("no answer from the user about the change of %s on disk: %w", real, err)
			}
			return "", reqErr(CodeCancelled, real, ReasonCancelled, "no answer from the user about the conflicting edit of %s; nothing was written: %v", real, err)
		}
		if ans == OptOpenDiff && i < 5 {
			q.ShowDiff = true
			continue
		}
		if ans == OptTakeAgent {
			return ans, nil
		}
		return OptKeepMine, nil
	}
}

func (b *Bridge) askReview(ctx context.Context, real, cur, proposed string) error {
	if b.ask == nil {
		return reqErr(CodeInternal, real, ReasonDeclined, "the user declined the edit of %s (no one to review it); nothing was written", real)
	}
	title := proposal(ctx)
	if title == "" {
		title = fmt.Sprintf("Review the agent's edit of %s", real)
	}
	q := Question{
		Kind:   KindReview,
		ByUser: proposal(ctx) != "",
		Title:  title,
		Path:   real,
		Body:   strings.Split(strings.TrimSuffix(UnifiedDiff(real, cur, proposed), "\n"), "\n"),
		Old:    cur,
		New:    proposed,
		Options: []Option{
			{OptAccept, "Accept", "y"},
			{OptReject, "Reject", "n"},
		},
	}
	ans, err := b.ask.Ask(ctx, q)
	if err != nil {
		return reqErr(CodeCancelled, real, ReasonCancelled, "no answer from the user about the edit of %s; nothing was written: %v", real, err)
	}
	if ans != OptAccept {
		return reqErr(CodeInternal, real, ReasonDeclined, "the user declined the edit of %s; nothing was written", real)
	}
	return nil
}

// readCapped reads all of f (whose size was sizeHint when stat'ed) but no
// more than max+1 bytes, in one allocation when the size did not change.
func readCapped(f *os.File, sizeHint, max int64) ([]byte, error) {
	if sizeHint < 0 || sizeHint > max {
		sizeHint = max
	}
	buf := make([]byte, 0, sizeHint+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if int64(len(buf)) > max {
			return buf, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}
