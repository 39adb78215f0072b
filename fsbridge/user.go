package fsbridge

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// WriteUser writes t to path for the user (an agent's change the user
// rejected, put back), through the agent's write path: the same policy
// checks and per-file lock, never merged nor reviewed, reported to the
// sink ByUser. A loaded buffer gets the change as one undo step; if it has
// unsaved changes, they stay unsaved: the disk gets the same change made
// to its own text. A t that does not exist deletes the file (the caller
// asked the user first); its buffer, if any, keeps the text.
//
// Nothing is asked: the user decides in the review while Neovim waits on
// the decision, so a question could not be shown (Neovim would wait for
// good). The user's decision on path is their consent to write it; a path
// that now leads elsewhere, where a question would be asked (a symlink put
// on it since the agent's change, to a file outside the workspace), is
// refused with an error saying so, nothing written.
func (b *Bridge) WriteUser(ctx context.Context, path string, t FileText) error {
	ctx = context.WithValue(WithUserWrite(ctx), userActKey{}, true)
	for attempt := 1; ; attempt++ {
		r, err := b.check(ctx, path, "write")
		if err != nil {
			return err
		}
		b.userWrites(r.Path)
		if !t.Exists {
			err = b.deleteUser(ctx, r.Path)
		} else {
			err = b.writeUser(ctx, r, t.Text)
		}
		if errors.Is(err, ErrPathChanged) && attempt < maxPathAttempts {
			continue
		}
		return err
	}
}

// userWrites tells Config.UserWrites of the user's write of real.
func (b *Bridge) userWrites(real string) {
	if b.cfg.UserWrites != nil {
		b.cfg.UserWrites(real)
	}
}

// heldKey marks a context whose caller holds a file's lock (see Hold):
// its value is the file's path.
type heldKey struct{}

// Hold takes path's lock, the one the bridge holds while it writes the
// file or reports a change of it (see ChangeSink), until release is
// called. WriteUser of path with the returned context runs under it
// rather than waiting for it. The review holds a file from reading its
// text to writing the user's decision, so that no report of the file
// lands between the two (it would drop a reject's undo). path is a real
// path, as the bridge reports it; Hold must not be called again for a
// file it holds.
func (b *Bridge) Hold(ctx context.Context, path string) (held context.Context, release func()) {
	path = filepath.Clean(path)
	mu := b.pathLock(path)
	mu.Lock()
	var once sync.Once
	return context.WithValue(ctx, heldKey{}, path), func() { once.Do(mu.Unlock) }
}

// lockPath takes real's lock unless ctx holds it already (Hold), and
// returns what releases it.
func (b *Bridge) lockPath(ctx context.Context, real string) (release func()) {
	if held, _ := ctx.Value(heldKey{}).(string); held == real {
		return func() {}
	}
	mu := b.pathLock(real)
	mu.Lock()
	return mu.Unlock
}

// hostWritesKey marks WriteUser calls whose loaded buffers only take the
// change (see WithHostWrites).
type hostWritesKey struct{}

// WithHostWrites makes WriteUser calls with the returned context write
// the file themselves where a buffer holds it, off Neovim's loop: the
// buffer takes the change as one undo step (Put) and is told of the
// file's new version (TookSaved: left unmodified when it was, its unsaved
// lines staying unsaved when not), where by default Neovim writes a clean
// buffer (:write, its sync of the file, in its loop) and reloads one with
// unsaved lines. For many files at once (a rewind): Neovim is busy for
// microseconds per file. Editors that are not SavedEditors write as
// WriteUser does by default.
func WithHostWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, hostWritesKey{}, true)
}

func hostWrites(ctx context.Context) bool { return ctx.Value(hostWritesKey{}) != nil }

// SavedEditor is an UnsavedEditor that can also take a buffer whose
// change was Put as saved: TookSaved is Took, the buffer then holding
// exactly its file's text (what the bridge wrote), so it is no longer
// modified.
type SavedEditor interface {
	UnsavedEditor
	TookSaved(ctx context.Context, realPath string, bufnr int, v FileVersion) error
}

// userActKey marks the checks of what the user does in the review
// (WriteUser, Shown): nothing is asked (see WriteUser).
type userActKey struct{}

func userAct(ctx context.Context) bool { return ctx.Value(userActKey{}) != nil }

// leadsElsewhere is the policy of the user's act on path in the review
// where the agent's writes would ask (where): allowed on the file the user
// decided on (path, as the review names it: a real path); refused when
// path now leads to another file, real (a symlink was put on it since).
func leadsElsewhere(path, real, where string) error {
	if filepath.Clean(path) == real {
		return nil
	}
	return reqErr(CodeInternal, path, ReasonRefused,
		"%s now leads to %s, %s (a symlink was put on its path since the agent's change): nothing was written or read there. "+
			"Remove the symlink to put the file back yourself", path, real, where)
}

// WatchedDirs lists the directories the bridge watches now: those of the
// loaded buffers' files and of the files the agent read or wrote (none for
// a nil Bridge).
func (b *Bridge) WatchedDirs() []string {
	if b == nil {
		return nil
	}
	return b.w.watchedDirs()
}

// DiskHolds reports whether the file at path (a real path) holds t now.
// When it does, that version of the file is taken as known, as after the
// bridge's own write: the caller says the editor wrote it from a buffer
// that holds t (nothing to bring in step), so the watcher does not look
// at the buffer again for it.
func (b *Bridge) DiskHolds(path string, t FileText) bool {
	if !t.Exists || int64(len(t.Text)) > b.cfg.MaxBytes {
		return false
	}
	f, fi, err := openRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi.Size() != int64(len(t.Text)) {
		return false
	}
	data, err := readCapped(f, fi.Size(), b.cfg.MaxBytes)
	if err != nil || string(data) != t.Text {
		return false
	}
	b.w.written(path, diskText{state: stateOf(fi), text: t.Text, ok: true})
	return true
}

func (b *Bridge) writeUser(ctx context.Context, r resolution, content string) error {
	real := r.Path
	defer b.lockPath(ctx, real)()
	for attempt := 0; attempt < 3; attempt++ {
		err := b.writeUserOnce(ctx, r, content)
		if !errors.Is(err, ErrBufferChanged) {
			return err
		}
	}
	return fmt.Errorf("the buffer of %s kept changing; nothing was written", real)
}

func (b *Bridge) writeUserOnce(ctx context.Context, r resolution, content string) error {
	real := r.Path
	st, err := b.current(ctx, real, false)
	if err != nil {
		return err
	}
	if se, ok := b.ed.(SavedEditor); ok && hostWrites(ctx) && st.buf != nil && !st.stale && !st.notText {
		return b.writePut(ctx, r, st, se, content)
	}
	sy, canSync := b.ed.(Syncer)
	if st.buf == nil || !st.buf.Modified || !canSync || st.notText {
		return b.writeOnce(ctx, r, content)
	}
	// A buffer with unsaved changes: the disk gets the change made to its
	// own text, the buffer the change alone (its other lines unsaved).
	disk := readDiskText(real, b.cfg.MaxBytes)
	sep := st.buf.lineEnding()
	mine, _ := splitText(st.text, sep)
	if disk.ok && !disk.state.Exists {
		// Deleted behind the buffer (the agent's change rejected): the
		// file comes back with its own last text, changed as the buffer
		// is changed; the buffer's other unsaved lines stay unsaved.
		b.mu.Lock()
		last, ok := b.gone[real]
		b.mu.Unlock()
		if ok {
			disk = diskText{text: last, ok: true, state: fileState{Exists: true}}
		}
	}
	if !disk.ok || !disk.state.Exists {
		return b.writeOnce(ctx, r, content)
	}
	ours, oursEOL := splitText(disk.text, sep)
	theirs, theirsEOL := splitText(content, sep)
	merged, conflicts := merge3(mine, ours, theirs, false)
	if len(conflicts) > 0 {
		return b.writeOnce(ctx, r, content) // saves the buffer, and says so
	}
	eol := oursEOL
	if _, mineEOL := splitText(st.text, sep); mineEOL != theirsEOL {
		eol = theirsEOL
	}
	diskNew := joinText(merged, eol, sep)
	b.w.beginWrite(real)
	err = writeRegular(r, diskNew, 0o644)
	b.w.endWrite(real, diskNew, err == nil)
	if err != nil {
		return osErr(real, err)
	}
	b.mu.Lock()
	delete(b.gone, real)
	b.mu.Unlock()
	dl, _ := bufLines(merged, eol)
	target, tEOL := bufLines(theirs, theirsEOL)
	if err := sy.Sync(ctx, real, st.buf.Bufnr, st.buf.Tick, dl, Diff(dl, target), Diff(st.buf.Lines, target), tEOL, target, content); err != nil {
		return err
	}
	b.report(real, FileText{Text: st.text, Exists: true}, FileText{Text: content, Exists: true}, ByUser)
	return nil
}

// writePut is writeUserOnce for a loaded buffer under WithHostWrites:
// the buffer takes the change from its text to content as one undo step,
// then the bridge writes the file: content when the buffer had no unsaved
// lines (it is then taken as saved), else the same change made to the
// disk's own text (the unsaved lines stay unsaved). A buffer the user
// changes meanwhile fails with ErrBufferChanged before anything is
// written (writeUser tries again).
func (b *Bridge) writePut(ctx context.Context, r resolution, st state, se SavedEditor, content string) error {
	real := r.Path
	sep := st.buf.lineEnding()
	theirs, theirsEOL := splitText(content, sep)
	diskNew := content
	if st.buf.Modified {
		disk := b.diskNow(real)
		if disk.ok && disk.state.Exists {
			mine, mineEOL := splitText(st.text, sep)
			ours, oursEOL := splitText(disk.text, sep)
			merged, conflicts := merge3(mine, ours, theirs, false)
			if len(conflicts) > 0 {
				// The change overlaps lines the disk holds otherwise:
				// as WriteUser does by default (the buffer saved, said).
				return b.writeOnce(ctx, r, content)
			}
			eol := oursEOL
			if mineEOL != theirsEOL {
				eol = theirsEOL
			}
			diskNew = joinText(merged, eol, sep)
		}
	}
	target, tEOL := bufLines(theirs, theirsEOL)
	took := se.Took
	if !st.buf.Modified && diskNew == content {
		took = se.TookSaved
	}
	b.w.beginWrite(real)
	putErr, err := putAndWrite(r, diskNew,
		func() error { return se.Put(ctx, real, st.buf.Bufnr, st.buf.Tick, Diff(st.buf.Lines, target), tEOL) },
		func(ok bool) FileVersion { return FileVersion{b.w.endWrite(real, diskNew, ok)} },
		func(v FileVersion) error { return took(ctx, real, st.buf.Bufnr, v) }, &b.own, &b.syncs, b.log)
	if putErr != nil {
		return putErr
	}
	if err != nil {
		return reqErr(CodeInternal, real, ReasonIO,
			"the change is in the Neovim buffer of %s (unsaved), but the file could not be written: %v", real, err)
	}
	b.mu.Lock()
	delete(b.gone, real)
	b.mu.Unlock()
	b.report(real, FileText{Text: st.text, Exists: true}, FileText{Text: content, Exists: true}, ByUser)
	return nil
}

// deleteUser deletes real for the user (an agent's created file rejected).
func (b *Bridge) deleteUser(ctx context.Context, real string) error {
	defer b.lockPath(ctx, real)()
	before := readDiskText(real, b.cfg.MaxBytes)
	if err := checkRegular(real); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return osErr(real, err)
	}
	b.w.beginWrite(real)
	err := os.Remove(real)
	b.w.endWrite(real, "", false)
	if err != nil {
		return osErr(real, err)
	}
	if before.ok {
		b.report(real, before.fileText(), FileText{}, ByUser)
	}
	return nil
}
