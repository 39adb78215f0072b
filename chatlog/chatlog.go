// Package chatlog keeps saved chats on disk by their changes: a chat is a
// file of lines joined by "\n" (no newline after the last), and a save
// replaces the lines from a given one to the end with the chat's current
// ones. What a save costs follows what changed since the last one, never
// the chat's length: the file is cut where the change starts (found
// scanning back from the end) and the new lines are written there.
package chatlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// ErrBehind is returned when a save starts past the end of the file: the
// lines before it never reached the file (a save was lost), so the caller
// must save the whole chat again (from line 0).
var ErrBehind = errors.New("chatlog: the file holds fewer lines than the save starts from")

// Writer applies saves to files, knowing each file's line count and size
// from its own writes (a file it does not know, or that changed behind it,
// is counted once). Safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	files map[string]state
}

// state is what the Writer knows of one file.
type state struct {
	lines int   // lines in the file (an empty file holds one, empty)
	size  int64 // its size when the Writer last wrote or counted it
}

// New returns a Writer that knows no file yet.
func New() *Writer { return &Writer{files: map[string]state{}} }

// Save makes lines [from, ...) of the file at path lines: what was there
// from line from on goes, lines follow. from 0 writes the file whole (and
// creates it, with mode perm); a save from past the file's last line
// returns ErrBehind and leaves the file as it was.
func (w *Writer) Save(path string, from int, lines []string, perm os.FileMode) error {
	if from < 0 {
		return fmt.Errorf("chatlog: save %s from line %d", path, from)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	flags := os.O_RDWR
	if from == 0 {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, perm)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			delete(w.files, path)
			return fmt.Errorf("%w: %s is gone", ErrBehind, path)
		}
		return fmt.Errorf("chatlog: %w", err)
	}
	defer f.Close()
	var cut int64
	if from > 0 {
		st, err := w.known(f, path)
		if err != nil {
			return err
		}
		if from > st.lines {
			return fmt.Errorf("%w: %s has %d lines, the save starts at %d", ErrBehind, path, st.lines, from)
		}
		if cut, err = endOfLine(f, st, from-1); err != nil {
			return fmt.Errorf("chatlog: %s: %w", path, err)
		}
	}
	text := strings.Join(lines, "\n")
	if from > 0 && len(lines) > 0 {
		text = "\n" + text
	}
	if err := f.Truncate(cut); err != nil {
		delete(w.files, path)
		return fmt.Errorf("chatlog: %w", err)
	}
	if _, err := f.WriteAt([]byte(text), cut); err != nil {
		delete(w.files, path) // counted again next time
		return fmt.Errorf("chatlog: %w", err)
	}
	n := from + len(lines)
	if from == 0 && len(lines) == 0 {
		n = 1 // an empty file: one empty line
	}
	w.files[path] = state{lines: n, size: cut + int64(len(text))}
	return nil
}

// Forget drops what the Writer knows of path (the file was deleted).
func (w *Writer) Forget(path string) {
	w.mu.Lock()
	delete(w.files, path)
	w.mu.Unlock()
}

// known is the state of f: the Writer's own when the file's size is the
// one it left, else counted from the file (once).
func (w *Writer) known(f *os.File, path string) (state, error) {
	fi, err := f.Stat()
	if err != nil {
		return state{}, fmt.Errorf("chatlog: %w", err)
	}
	if st, ok := w.files[path]; ok && st.size == fi.Size() {
		return st, nil
	}
	n, err := countLines(f)
	if err != nil {
		return state{}, fmt.Errorf("chatlog: count the lines of %s: %w", path, err)
	}
	st := state{lines: n, size: fi.Size()}
	w.files[path] = st
	return st, nil
}

// countLines is the number of lines of f (newlines + 1).
func countLines(f *os.File) (int, error) {
	buf := make([]byte, 256<<10)
	n := 1
	var off int64
	for {
		k, err := f.ReadAt(buf, off)
		n += bytes.Count(buf[:k], []byte{'\n'})
		off += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// endOfLine is the offset where line i (0-based, of st.lines) of f ends:
// the file's end for its last line, else the offset of its newline, found
// scanning back from the end (a cost that follows how far from the end
// line i is).
func endOfLine(f *os.File, st state, i int) (int64, error) {
	if i >= st.lines-1 {
		return st.size, nil
	}
	// Line i ends at the newline that has st.lines-1-i newlines from the
	// end counting itself.
	want := st.lines - 1 - i
	buf := make([]byte, 64<<10)
	end := st.size
	for end > 0 {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && err != io.EOF {
			return 0, err
		}
		for j := len(chunk) - 1; j >= 0; j-- {
			if chunk[j] == '\n' {
				want--
				if want == 0 {
					return start + int64(j), nil
				}
			}
		}
		end = start
	}
	return 0, fmt.Errorf("line %d not found in %d lines", i, st.lines)
}
