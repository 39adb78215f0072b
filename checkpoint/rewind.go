package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/nvim-acp/nvim-acp/fsbridge"
	"github.com/nvim-acp/nvim-acp/internal/atomicfile"
)

// This file is what a session does with its store around a rewind,
// without the session: where the store lives, how a rewind's files are
// written (through the editor's bridge when there is one), the order of
// the writes, and the user's unreported edits recorded before planning.
// The host only wires it to the session (host/checkpoint.go).

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// DirFor is the directory of the store of the agent's session id under
// base.
func DirFor(base, sessionID string) string {
	return filepath.Join(base, unsafeName.ReplaceAllString(sessionID, "_"))
}

// ParseMode is the Mode a caller names ("exact", else KeepUser).
func ParseMode(mode string) Mode {
	if m := Mode(mode); m == Exact {
		return m
	}
	return KeepUser
}

// FileOf is a bridge's file text as a File.
func FileOf(t fsbridge.FileText) File {
	return File{Data: t.Text, Exists: t.Exists}
}

// ReadDisk is path's content on disk (ok false: unreadable).
func ReadDisk(path string) (File, bool) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return File{}, true
	}
	if err != nil {
		return File{}, false
	}
	return File{Data: string(data), Exists: true}, true
}

// Bridge is what a rewind needs of the editor's fs bridge
// (*fsbridge.Bridge).
type Bridge interface {
	// Loaded reports whether a buffer holds path.
	Loaded(path string) bool
	// Shown is path's text as the user sees it (its buffer's).
	Shown(ctx context.Context, path string) (text string, exists bool, err error)
	// WriteUser writes path as the user would (a loaded buffer takes
	// the change as one undo step, its unsaved lines kept).
	WriteUser(ctx context.Context, path string, t fsbridge.FileText) error
}

// Holder is a Bridge that can hold a file still (fsbridge.Bridge.Hold):
// the lock the bridge writes and reports the file under, taken until
// release; WriteUser with the held context runs under it.
type Holder interface {
	Hold(ctx context.Context, path string) (held context.Context, release func())
}

// Write writes a rewind's content of path: text through b's user write
// path, with a loaded buffer's unsaved lines kept (the rewind's change is
// merged into the buffer; an overlap with them leaves the file alone); a
// file that is not text, or with no bridge (b nil), straight to disk.
// When b is a Holder, the file is held from reading its texts to writing
// it, so that no write of the agent's comes between the merge and the
// write (the rewind would undo it unseen).
func Write(ctx context.Context, b Bridge, path string, f File) error {
	text := !f.Exists || fsbridge.IsText([]byte(f.Data))
	if b == nil || !text {
		return WriteRaw(path, f)
	}
	if h, ok := b.(Holder); ok {
		var release func()
		ctx, release = h.Hold(ctx, path)
		defer release()
	}
	content := f.Data
	if f.Exists && b.Loaded(path) {
		shown, _, err := b.Shown(ctx, path)
		disk, ok := ReadDisk(path)
		if err == nil && ok && disk.Exists && shown != disk.Data {
			merged, conflicts := fsbridge.Merge3(disk.Data, shown, f.Data, false)
			if conflicts > 0 {
				return fmt.Errorf("its unsaved lines overlap the rewind: save or undo them first")
			}
			content = merged
		}
	}
	// The bridge writes the files of loaded buffers itself, the buffers
	// only taking the change: Neovim is not held for a :write per file.
	return b.WriteUser(fsbridge.WithHostWrites(ctx), path, fsbridge.FileText{Text: content, Exists: f.Exists})
}

// WriteRaw writes f to path atomically (removes it when f does not exist).
func WriteRaw(path string, f File) error {
	if !f.Exists {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	mode := os.FileMode(0o644)
	if info, err := os.Stat(path); err == nil {
		mode = info.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(f.Data), mode)
}

// OpenFirst puts the files loaded in buffers first: the writes start in
// this order, so the files on screen change first.
func (p *Plan) OpenFirst(loaded func(path string) bool) {
	// (asked once per file: a Bridge's Loaded resolves the path)
	open := make(map[string]bool, len(p.Files))
	for _, f := range p.Files {
		open[f.Path] = loaded(f.Path)
	}
	sort.SliceStable(p.Files, func(i, j int) bool { return open[p.Files[i].Path] && !open[p.Files[j].Path] })
}

// NoteUserEdits records, before a rewind to before message seq is
// planned, the user's own edits of the files it looks at that reached the
// disk unreported (a buffer written with :w): a file whose disk is the
// text the review last saw of it (seen; for a loaded file, brought up to
// its buffer first) changed in a way the record explains, the user's.
// seen's ok false: the review has no record of path. The files are
// looked at several at once (seen may ask the editor, then waits).
func (s *Store) NoteUserEdits(ctx context.Context, seq int, seen func(ctx context.Context, path string) (File, bool)) {
	paths, err := s.Paths(seq)
	if err != nil {
		return
	}
	each(len(paths), func(k int) {
		p := paths[k]
		t, ok := seen(ctx, p)
		if !ok {
			return
		}
		if disk, ok := ReadDisk(p); ok && disk.Exists == t.Exists && (!disk.Exists || disk.Data == t.Data) {
			s.User(p, disk)
		}
	}, writers)
}
