package fsbridge

import (
	"context"
	"sync"
	"unsafe"
)

// sameString reports whether a and b are the same string value: the same
// bytes in memory, not merely equal. Go strings are immutable, so while a
// is kept alive, identity means equal content without looking at it.
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// ownedString returns data as a string without copying it: data must be
// the caller's own (read into a slice of its own) and never change after.
// A file's text can be megabytes, and a copy of it is a copy too many.
func ownedString(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	return unsafe.String(&data[0], len(data))
}

// textMemo remembers, per path, the last text that passed checkText, so the
// same buffer text read again (the host reuses its copy of an unchanged
// buffer) is not scanned again. It holds that text, which keeps the
// identity check sound.
type textMemo struct {
	mu sync.Mutex
	ok map[string]string
}

func (m *textMemo) seen(path, text string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.ok[path]
	return ok && sameString(t, text)
}

func (m *textMemo) remember(path, text string) {
	if len(text) < 4096 {
		return // scanning it is cheaper than remembering it
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok == nil {
		m.ok = map[string]string{}
	}
	m.ok[path] = text
}

// FileVersion identifies one version of a file on disk (size, mtime,
// inode); all files that do not exist have the same zero version.
type FileVersion struct{ st fileState }

// Stat returns v's modification time (Unix seconds and nanoseconds), size
// and inode.
func (v FileVersion) Stat() (sec, nsec, size int64, ino uint64) {
	return v.st.MTime / 1e9, v.st.MTime % 1e9, v.st.Size, v.st.Ino
}

// StatVersion returns the version of the file at path now.
func StatVersion(path string) FileVersion { return FileVersion{statFile(path)} }

// LoadChecker is an Editor that tells the bridge when a buffer may have
// been loaded that BufferLoaded has not reported yet (it comes
// asynchronously, and a file opened an instant before a read must still be
// read from its buffer): while LoadsPending is true the bridge asks
// Snapshot about every file it reads, loaded or not as far as it knows.
type LoadChecker interface {
	LoadsPending(ctx context.Context) bool
}

// UnsavedEditor is an Editor that can change a buffer without writing it,
// for writes into a buffer with unsaved changes (an agent's write never
// saves the user's unsaved lines):
//   - Put applies hunks (against the buffer as of tick, as Apply's) to
//     bufnr as one undo step, keeping views, and sets its final newline to
//     eol, without writing the buffer; ErrBufferChanged, ErrPathChanged or
//     ErrNotRegular as Apply's (nothing done);
//   - Took tells Neovim that bufnr's file changed to v, a version the
//     bridge wrote (its text is merged in the buffer already): the buffer
//     is taken as read from that version, still modified, so writing it
//     later neither warns that the file changed nor is it reloaded. When
//     the file is no longer at v (another program wrote it since), nothing
//     is taken: the buffer stays behind the disk, for the watcher to bring
//     in step.
type UnsavedEditor interface {
	Put(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool) error
	Took(ctx context.Context, realPath string, bufnr int, v FileVersion) error
}

// ResultPutter is an UnsavedEditor that keeps a copy of the buffers it
// reports, as ResultEditor: the bridge calls PutResult instead of Put, with
// what the buffer holds once the hunks are in (lines, and text = their
// Text()), so the copy needs no reading back at the next write.
type ResultPutter interface {
	UnsavedEditor
	PutResult(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool, lines []string, text string) error
}

// putUnsaved puts the edit from buf's lines to target in buf through ue,
// without writing it (UnsavedEditor.Put).
func putUnsaved(ctx context.Context, ue UnsavedEditor, realPath string, buf *Buffer, target []string, eol bool, text string) error {
	hunks := Diff(buf.Lines, target)
	if rp, ok := ue.(ResultPutter); ok {
		return rp.PutResult(ctx, realPath, buf.Bufnr, buf.Tick, hunks, eol, target, text)
	}
	return ue.Put(ctx, realPath, buf.Bufnr, buf.Tick, hunks, eol)
}

// ResultEditor is an Editor that keeps a copy of the buffers it reports:
// the bridge calls ApplyResult instead of Apply, with what the buffer holds
// once the hunks are applied (lines, and text = their Text()), so the copy
// needs no reading back.
type ResultEditor interface {
	Editor
	ApplyResult(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool, lines []string, text string) error
}

// apply applies the edit from buf's lines to target through ed (realPath:
// the file the buffer must still stand for, see Editor.Apply).
func apply(ctx context.Context, ed Editor, realPath string, buf *Buffer, target []string, eol bool, text string) error {
	hunks := Diff(buf.Lines, target)
	if re, ok := ed.(ResultEditor); ok {
		return re.ApplyResult(ctx, realPath, buf.Bufnr, buf.Tick, hunks, eol, target, text)
	}
	return ed.Apply(ctx, realPath, buf.Bufnr, buf.Tick, hunks, eol)
}

// FreezeWith is Freeze when Text() is already known: text must be exactly
// what Text() returns.
func (b *Buffer) FreezeWith(text string) {
	b.text = text
	b.frozen = true
}

// Freeze computes b's Text once and keeps it: Text on b (and on copies of
// it made afterwards) returns the same string without joining the lines
// again. The lines must not change afterwards.
func (b *Buffer) Freeze() {
	b.text = b.Text()
	b.frozen = true
}
