package chatlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edit is one save: the chat's lines from line from on become lines.
type edit struct {
	from  int
	lines []string
}

// Each case saves its edits in turn (a restart between saves: a Writer
// that knows nothing of the file) and compares the file with the chat the
// edits make.
func TestSaveFollowsTheChat(t *testing.T) {
	long := make([]string, 5000)
	for i := range long {
		long[i] = strings.Repeat("x", i%97) + " line"
	}
	for _, c := range []struct {
		name    string
		edits   []edit
		restart bool // a new Writer before each save
	}{
		{"whole", []edit{{0, []string{"a", "b"}}}, false},
		{"one empty line", []edit{{0, []string{""}}}, false},
		{"lines appended", []edit{{0, []string{"a"}}, {1, []string{"b", "c"}}, {3, []string{"d"}}}, false},
		{"last line grows", []edit{{0, []string{"a", "b"}}, {1, []string{"bc", "d"}}}, false},
		{"a line in the middle changes", []edit{{0, []string{"a", "b", "c", "d"}}, {1, []string{"B", "c", "d", "e"}}}, false},
		{"lines deleted at the end", []edit{{0, []string{"a", "b", "c"}}, {1, nil}}, false},
		{"empty lines", []edit{{0, []string{"", "", ""}}, {2, []string{"", "x", ""}}, {5, []string{""}}}, false},
		{"rewritten from the start", []edit{{0, []string{"a", "b"}}, {0, []string{"c"}}}, false},
		{"long chat, change near the end", []edit{{0, long}, {4990, []string{"end"}}}, false},
		{"long chat, change near the start", []edit{{0, long}, {3, []string{"start"}}}, false},
		{"after a restart", []edit{{0, long}, {4999, []string{"more", "lines"}}, {5000, []string{"x"}}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chat.txt")
			w := New()
			var chat []string
			for _, e := range c.edits {
				if c.restart {
					w = New()
				}
				if err := w.Save(path, e.from, e.lines, 0o600); err != nil {
					t.Fatalf("save from %d: %v", e.from, err)
				}
				chat = append(chat[:e.from:e.from], e.lines...)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.Join(chat, "\n"); string(b) != want {
					t.Fatalf("after saving from %d the file holds\n%q\nwant\n%q", e.from, trim(string(b)), trim(want))
				}
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("the file's mode: %v %v", fi.Mode(), err)
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 200 {
		return "..." + s[len(s)-200:]
	}
	return s
}

// A save past the file's end (a save lost before it) or into a file that
// is gone changes nothing and says the chat must be saved whole.
func TestSaveBehind(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(path string, w *Writer)
		from  int
	}{
		{"past the end", func(path string, w *Writer) { _ = w.Save(path, 0, []string{"a", "b"}, 0o600) }, 3},
		{"past the end, counted after a restart", func(path string, _ *Writer) { _ = New().Save(path, 0, []string{"a"}, 0o600) }, 2},
		{"the file is gone", func(path string, w *Writer) { _ = w.Save(path, 0, []string{"a"}, 0o600); os.Remove(path) }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chat.txt")
			w := New()
			c.setup(path, w)
			before, _ := os.ReadFile(path)
			err := w.Save(path, c.from, []string{"z"}, 0o600)
			if !errors.Is(err, ErrBehind) {
				t.Fatalf("err = %v, want ErrBehind", err)
			}
			after, _ := os.ReadFile(path)
			if string(after) != string(before) {
				t.Fatalf("the file changed: %q -> %q", before, after)
			}
		})
	}
}
