package fsbridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/nvim-acp/nvim-acp/textcache"
)

// FileText is a file's content at one moment, or its absence.
type FileText struct {
	Text   string
	Exists bool
}

// Who changed a file, as a ChangeSink is told.
const (
	// ByAgent: the agent wrote the file through the bridge
	// (fs/write_text_file, or another door to the same write path).
	ByAgent = iota
	// ByDisk: the file changed on disk, made by someone else than the
	// bridge (the agent's own tools, a command, another program); the
	// sink decides whose change it is.
	ByDisk
	// ByUser: the user had the bridge write it (a code block applied,
	// an agent's change rejected).
	ByUser
	// ByApproved: the agent wrote it through the bridge and the user
	// approved the change first (fs.write = "review").
	ByApproved
)

// ChangeSink learns every change the bridge makes to a file or sees in it,
// in the order they happen for each file: before is the text the user saw
// just before (the loaded buffer's, else the disk's), after the text now.
// It must not block (the bridge calls it holding the file's lock).
type ChangeSink interface {
	FileChanged(path string, before, after FileText, by int)
}

// LinesSink is a ChangeSink that also takes the agent's writes with the
// new text's lines: FileChangedLines is FileChanged where lines and eol are
// after.Text split at "\n" (the last line end dropped; eol: there was
// one). The slice is the bridge's: a sink keeps a copy of it, never the
// slice itself. A record of a file's lines takes them instead of splitting
// and comparing the whole text again (0.2 ms for 10,000 lines).
type LinesSink interface {
	FileChangedLines(path string, before, after FileText, lines []string, eol bool, by int)
}

// WriteNoticer is a ChangeSink told, before the bridge writes a file for
// the agent (fs/write_text_file and the other doors to that write path),
// that it is about to: the file still holds its text from before the
// write, which a record of changes that knows no earlier text of the file
// (one git ignores, or outside git) can read then. It must not block.
type WriteNoticer interface {
	WillWrite(path string)
}

// willWrite tells the sink, if it is a WriteNoticer, that real is about
// to be written for the agent (not for the user's own writes).
func (b *Bridge) willWrite(ctx context.Context, real string) {
	if origin(ctx) != ByAgent {
		return
	}
	b.mu.Lock()
	s := b.sink
	b.mu.Unlock()
	if n, ok := s.(WriteNoticer); ok {
		n.WillWrite(real)
	}
}

// SetSink has every change reported to s from now on (nil: to no one).
func (b *Bridge) SetSink(s ChangeSink) {
	b.mu.Lock()
	b.sink = s
	b.mu.Unlock()
}

// report tells the sink, if any, that real changed from before to after.
func (b *Bridge) report(real string, before, after FileText, by int) {
	b.reportLines(real, before, after, nil, false, by)
}

// reportLines is report with after's lines, when lines is not nil
// (splitLines(after.Text), see LinesSink).
func (b *Bridge) reportLines(real string, before, after FileText, lines []string, eol bool, by int) {
	if before == after {
		return
	}
	b.mu.Lock()
	s := b.sink
	b.mu.Unlock()
	if ls, ok := s.(LinesSink); ok && lines != nil {
		ls.FileChangedLines(real, before, after, lines, eol, by)
	} else if s != nil {
		s.FileChanged(real, before, after, by)
	}
}

// originKey marks writes the user asked for (see WithUserWrite).
type originKey struct{}

// WithUserWrite makes WriteTextFile calls with the returned context the
// user's own writes: reported to the sink ByUser, not as the agent's.
func WithUserWrite(ctx context.Context) context.Context {
	return context.WithValue(ctx, originKey{}, ByUser)
}

// origin is who makes a write with ctx: the user for their own writes and
// proposals (a code block applied), else the agent.
func origin(ctx context.Context) int {
	if o, ok := ctx.Value(originKey{}).(int); ok {
		return o
	}
	if proposal(ctx) != "" {
		return ByUser
	}
	return ByAgent
}

// Syncer is an Editor that can bring a buffer in step with its file when
// someone else changed the file on disk: Sync reloads bufnr (as of tick)
// from the file, which must then hold exactly theirs (the lines the bridge
// merged; else the reload is undone and an error wrapping ErrBufferChanged
// returned: the file moved on), and applies hunks (against theirs) on top
// in the same undo step. The buffer is left modified exactly when hunks
// change something; writing it later does not warn that the file changed.
// moved are the hunks from the buffer's text before to after (views
// follow them); result and text what the buffer holds afterwards.
type Syncer interface {
	Sync(ctx context.Context, realPath string, bufnr, tick int, theirs []string, hunks, moved []Hunk, eol bool, result []string, text string) error
}

// diskText is one version of a file on disk as the bridge saw it.
type diskText struct {
	state fileState
	text  string
	ok    bool // text is the file's content (false: binary, too large, unreadable, missing)
}

func (d diskText) fileText() FileText {
	return FileText{Text: d.text, Exists: d.state.Exists}
}

// readDiskText reads p if it is a regular file of UTF-8 text within max
// bytes. A missing file is ok, with no text and a zero state.
func readDiskText(p string, max int64) diskText { return readDiskTextIn(p, max, nil) }

// readDiskTextIn is readDiskText through texts (nil: none): a file whose
// version is settled (textcache.Key) and cached is not read again, and
// one read in a settled version is cached.
func readDiskTextIn(p string, max int64, texts *textcache.Cache) diskText {
	if texts != nil {
		// Found by its version without opening it: a hit is the same
		// inode of the same device, in the same times, as the file read
		// at this path before, so its text is the one read then.
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() <= max {
			if key, settled := texts.Key(fi); settled {
				if text, ok := texts.Get(p, key); ok {
					return diskText{state: stateOf(fi), text: text, ok: true}
				}
			}
		}
	}
	f, fi, err := openRegular(p)
	if errors.Is(err, fs.ErrNotExist) {
		return diskText{ok: true}
	}
	if err != nil {
		return diskText{state: statFile(p)}
	}
	defer f.Close()
	d := diskText{state: stateOf(fi)}
	if fi.Size() > max {
		return d
	}
	// Cached by the open file's version, taken before its bytes: a write
	// after it gives the file another ctime, so text read then is never
	// found again by this version. (A cached version was looked up above.)
	key, settled := texts.Key(fi)
	data, err := readCapped(f, fi.Size(), max)
	if err != nil || int64(len(data)) > max || !IsText(data) {
		return d
	}
	d.text, d.ok = ownedString(data), true // data is never written again
	if settled {
		texts.Put(p, key, d.text)
	}
	return d
}

// ReadText reads p if it is a regular file (not through a symlink) of
// UTF-8 text within max bytes; a missing file is ok, not existing.
func ReadText(p string, max int64) (FileText, bool) { return ReadTextIn(p, max, nil) }

// ReadTextIn is ReadText through texts, the texts of files kept by
// version (nil: none): an unchanged file whose times are settled is not
// read again.
func ReadTextIn(p string, max int64, texts *textcache.Cache) (FileText, bool) {
	d := readDiskTextIn(p, max, texts)
	return d.fileText(), d.ok
}

// IsText reports whether data is text the bridge serves: UTF-8, no NUL.
func IsText(data []byte) bool {
	return utf8.Valid(data) && bytes.IndexByte(data, 0) < 0
}

// reconcile handles a change of p on disk that the bridge did not make:
// the agent's own tools, a command it ran, another program. The change is
// reported to the sink, and p's loaded buffer follows it without losing
// anything the user typed:
//   - an unmodified buffer takes the new text, as hunks in one undo step;
//   - a modified buffer gets the change merged into it (base: the text the
//     file had, or what the agent last read or wrote of it when the file
//     was left as the agent's fs request left it; theirs: the disk; mine:
//     the buffer). Overlaps are the user's question (conflict). The buffer
//     stays modified when it holds lines the disk lacks: unsaved lines are
//     never saved, nor dropped, behind the user's back.
func (b *Bridge) reconcile(ctx context.Context, p string) {
	mu := b.pathLock(p)
	mu.Lock()
	defer mu.Unlock()
	old, known := b.w.lastText(p)
	now := readDiskText(p, b.cfg.MaxBytes)
	b.w.setText(p, now)
	if now.state.Exists {
		b.mu.Lock()
		delete(b.gone, p)
		b.mu.Unlock()
	}
	if b.ed == nil || !b.isLoaded(p) {
		if known && old.ok && now.ok {
			b.report(p, old.fileText(), now.fileText(), ByDisk)
		}
		return
	}
	for attempt := 0; attempt < 3; attempt++ {
		err := b.reconcileBuffer(ctx, p, old, known, now)
		if !errors.Is(err, ErrBufferChanged) {
			if err != nil && ctx.Err() == nil {
				b.log.Debug("fsbridge: reconcile failed", "path", p, "err", err)
			}
			return
		}
	}
}

// reconcileBuffer is one attempt of reconcile for a loaded p; it returns
// ErrBufferChanged when the user changed the buffer meanwhile.
func (b *Bridge) reconcileBuffer(ctx context.Context, p string, old diskText, known bool, now diskText) error {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	buf, ok, err := b.ed.Snapshot(sctx, p)
	cancel()
	if err != nil {
		return err
	}
	if !ok {
		if known && old.ok && now.ok {
			b.report(p, old.fileText(), now.fileText(), ByDisk)
		}
		return nil
	}
	mine := buf.Text()
	if !buf.Stale {
		// The buffer was last read from or written to the file as it is
		// now (the user's own :write, or already brought in step).
		return nil
	}
	sy, canSync := b.ed.(Syncer)
	if !now.state.Exists {
		// Deleted: the buffer keeps the text (writing it creates the
		// file again); Neovim notes the file is gone. The file's last
		// text is kept while the buffer has unsaved changes: bringing the
		// file back (WriteUser) gives the disk that text, not theirs.
		if buf.Modified && known && old.ok && old.state.Exists {
			b.mu.Lock()
			b.gone[p] = old.text
			b.mu.Unlock()
		}
		b.report(p, FileText{Text: mine, Exists: true}, FileText{}, ByDisk)
		_, err := b.ed.Reload(ctx, p)
		return err
	}
	if !now.ok || !canSync {
		// Not text (or an Editor that cannot merge): reload what is
		// unmodified, warn about what is not.
		modified, err := b.ed.Reload(ctx, p)
		if err != nil {
			return err
		}
		if modified {
			b.w.warnOnce(ctx, p, fmt.Sprintf("%s changed on disk and cannot be merged into its buffer, which has unsaved changes (it is not text, or too large): :e! loads the disk's version, :w writes yours over it", p))
		} else {
			b.w.clearWarned(p)
		}
		return nil
	}
	b.w.clearWarned(p)
	theirs := now.text
	sep := buf.lineEnding()
	if mine == theirs {
		switch {
		case buf.Modified:
			// Already the disk's text: the buffer is the file's again.
			tl, tEOL := bufLines(splitText(theirs, sep))
			return sy.Sync(ctx, p, buf.Bufnr, buf.Tick, tl, nil, nil, tEOL, tl, theirs)
		case buf.Stale:
			// Only the file's time changed for the buffer: Neovim
			// records it (no undo step).
			_, err := b.ed.Reload(ctx, p)
			return err
		}
		return nil
	}
	// The base: what the disk's new text was made from.
	base, haveBase := "", false
	b.mu.Lock()
	snap, hasSnap := b.snaps[p]
	b.mu.Unlock()
	inStep := known && old.ok && old.state.Exists && mine == old.text
	switch {
	case !buf.Modified && !inStep:
		// The buffer lags behind the disk (it was not reloaded since an
		// earlier change): it follows the disk.
		base, haveBase = mine, true
	case known && old.ok && old.state.Exists:
		// What the file held: the disk's change is what changed since.
		// Not the agent's last read or write of it, which may hold the
		// user's unsaved lines (a buffer read, the agent's write of it,
		// whose disk text lacks them): against it, the disk would seem to
		// have deleted them.
		base, haveBase = old.text, true
	case hasSnap && known && snap.state.Exists && snap.state == old.state:
		// The file's text is unknown (not text, too large when seen), but
		// it was as the agent's last fs request left it (or read it): the
		// agent made its new version from that text.
		base, haveBase = snap.text, true
	case known && old.ok:
		// The file did not exist (a new file's buffer the user typed
		// into): the agent made it from nothing, so both sides' lines
		// are new; where they meet is the user's question.
		base, haveBase = "", true
	case !buf.Modified:
		base, haveBase = mine, true
	}
	if !haveBase {
		b.w.warnOnce(ctx, p, fmt.Sprintf("%s changed on disk, but what its buffer was read from is unknown, so the change cannot be merged into your unsaved changes: :e! loads the disk's version, :w writes yours over it", p))
		return nil
	}
	result, eol, kept, err := b.mergeDisk(ctx, p, base, mine, theirs, sep, buf.Modified)
	if err != nil {
		return err
	}
	resultText := joinText(result, eol, sep)
	target, tEOL := bufLines(result, eol)
	tl, _ := bufLines(splitText(theirs, sep))
	modified := resultText != theirs
	if err := sy.Sync(ctx, p, buf.Bufnr, buf.Tick, tl, Diff(tl, target), Diff(buf.Lines, target), tEOL, target, resultText); err != nil {
		return err
	}
	before := FileText{Text: mine, Exists: true}
	if mine == "" && known && old.ok && !old.state.Exists {
		// An empty buffer of a file that did not exist: the agent
		// created the file (rejecting it deletes the file).
		before = FileText{}
	}
	b.report(p, before, FileText{Text: resultText, Exists: true}, ByDisk)
	// Short: a message wider than the screen stops Neovim at a
	// hit-enter prompt (80 columns); :help acp-files says the rest.
	switch {
	case len(kept) > 0:
		b.ed.Warn(ctx, fmt.Sprintf("%s changed on disk: yours kept where both changed (%s), unsaved", b.shortPath(p), describeRanges(kept)))
	case modified && buf.Modified:
		b.ed.Warn(ctx, fmt.Sprintf("%s changed on disk: merged, your unsaved edits kept", b.shortPath(p)))
	case modified:
		b.ed.Warn(ctx, fmt.Sprintf("%s changed on disk again without your lines: kept in the buffer, unsaved", b.shortPath(p)))
	}
	return nil
}

// shortPath is p relative to the workspace root it is in, for messages.
func (b *Bridge) shortPath(p string) string {
	for _, r := range b.roots {
		if within(p, r) {
			if rel, err := filepath.Rel(r, p); err == nil && rel != "." {
				return rel
			}
		}
	}
	return p
}

// bufLines is lines as a buffer holds them: an empty text is one empty
// line with no final newline.
func bufLines(lines []string, eol bool) ([]string, bool) {
	if len(lines) == 0 {
		return []string{""}, false
	}
	return lines, eol
}

// mergeDisk merges base->theirs (a change on disk) into mine (the
// buffer), asking the user about overlaps when the buffer has unsaved
// changes; kept lists the overlaps where the user kept theirs.
func (b *Bridge) mergeDisk(ctx context.Context, p, base, mine, theirs, sep string, unsaved bool) ([]string, bool, []mergeConflict, error) {
	tl, tEOL := splitText(theirs, sep)
	if base == mine {
		return tl, tEOL, nil, nil
	}
	ml, mEOL := splitText(mine, sep)
	bl, bEOL := splitText(base, sep)
	eol := tEOL
	if tEOL == bEOL && len(ml) > 0 && len(bl) > 0 {
		eol = mEOL
	}
	result, conflicts := merge3(bl, ml, tl, false)
	if len(conflicts) == 0 {
		return result, eol, nil, nil
	}
	take, _ := merge3(bl, ml, tl, true)
	choice, err := b.askConflict(ctx, p, mine, joinText(take, eol, sep), conflicts, unsaved, true)
	if err != nil {
		return nil, false, nil, err
	}
	if choice == OptTakeAgent {
		return take, eol, nil, nil
	}
	return result, eol, conflicts, nil
}

// Shown is path's text as the user sees it now (its loaded buffer, else
// the disk), for showing the user or the review, never the agent: no
// workspace policy applies, but a path that leads out of the workspace
// through a symlink is an error (the review's record of a file would take
// another file's text, which its feedback may send the agent). exists is false when the file is not on disk
// (its buffer, if any, does not make it exist); an error says it is not
// text (or cannot be read).
func (b *Bridge) Shown(ctx context.Context, path string) (text string, exists bool, err error) {
	real, err := realPath(path)
	if err != nil {
		real = path
	}
	if !b.inWorkspace(real) {
		// The review's path leads out of the workspace through a symlink
		// put there since: its text is never taken for the file's.
		if err := leadsElsewhere(path, real, "outside the workspace"); err != nil {
			return "", false, err
		}
	}
	st, err := b.current(ctx, real, true)
	if err != nil {
		return "", false, err
	}
	if !st.exists {
		return "", false, nil
	}
	if st.stale {
		return st.shown, true, nil
	}
	return st.text, true, nil
}

// Loaded reports whether path (a real path) is loaded in a buffer.
func (b *Bridge) Loaded(path string) bool {
	rp, ok := b.norm(path)
	return ok && b.isLoaded(rp)
}

// DiskText is path's text on disk (not its buffer's), read as the bridge
// reads files: ok is false for a file that is not text or over its size
// cap.
func (b *Bridge) DiskText(path string) (FileText, bool) {
	return ReadTextIn(path, b.cfg.MaxBytes, b.cfg.Texts)
}

// Reconcile brings path's buffer in step with a change on disk now (as the
// watcher does after a change's events settle): for a change found
// another way (a scan after a tool call).
func (b *Bridge) Reconcile(ctx context.Context, path string) {
	if rp, ok := b.norm(path); ok {
		b.reconcile(ctx, rp)
	}
}
