package fsbridge

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// typist is the user typing into a buffer while the agent works: each of
// its calls inserts a new line ("user <n>") at a random place, the way a
// keystroke lands between any two of the bridge's calls into Neovim.
type typist struct {
	mu   sync.Mutex
	rnd  *rand.Rand
	ed   *fakeEditor
	path string
	n    int
}

func (ty *typist) typeLine() {
	ty.mu.Lock()
	ty.n++
	line := fmt.Sprintf("user %d", ty.n)
	pos := ty.rnd.Intn(1 << 20)
	ty.mu.Unlock()
	ty.ed.edit(ty.path, func(l []string) []string {
		at := pos % (len(l) + 1)
		return append(l[:at], append([]string{line}, l[at:]...)...)
	})
}

// maybe types with probability p (per mille).
func (ty *typist) maybe(p int) {
	ty.mu.Lock()
	hit := ty.rnd.Intn(1000) < p
	ty.mu.Unlock()
	if hit {
		ty.typeLine()
	}
}

// save is the user's :write.
func (ty *typist) save() {
	e := ty.ed
	e.mu.Lock()
	defer e.mu.Unlock()
	fb := e.bufs[ty.path]
	text := Buffer{Lines: fb.lines, EOL: fb.eol, FileFormat: fb.ff}.Text()
	if err := os.WriteFile(fb.path, []byte(text), 0o644); err == nil {
		fb.modified = false
		fb.tick++
		fb.disk = statFile(fb.path)
	}
}

// typingEditor is the fake Neovim with a typist whose lines land at the
// start of any of the bridge's calls into it, with probability p.
type typingEditor struct {
	*fakeEditor
	ty *typist
	p  int
}

func (t *typingEditor) Snapshot(ctx context.Context, p string) (Buffer, bool, error) {
	t.ty.maybe(t.p)
	return t.fakeEditor.Snapshot(ctx, p)
}

func (t *typingEditor) Apply(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool) error {
	t.ty.maybe(t.p)
	return t.fakeEditor.Apply(ctx, realPath, bufnr, tick, hunks, eol)
}

func (t *typingEditor) Put(ctx context.Context, realPath string, bufnr, tick int, hunks []Hunk, eol bool) error {
	t.ty.maybe(t.p)
	return t.fakeEditor.Put(ctx, realPath, bufnr, tick, hunks, eol)
}

func (t *typingEditor) Took(ctx context.Context, realPath string, bufnr int, v FileVersion) error {
	t.ty.maybe(t.p)
	return t.fakeEditor.Took(ctx, realPath, bufnr, v)
}

func (t *typingEditor) Sync(ctx context.Context, realPath string, bufnr, tick int, theirs []string, hunks, moved []Hunk, eol bool, result []string, text string) error {
	t.ty.maybe(t.p)
	return t.fakeEditor.Sync(ctx, realPath, bufnr, tick, theirs, hunks, moved, eol, result, text)
}

// TestTypingWhileAgentWritesProperty: random interleavings of the user's
// typing (a new line anywhere, between any two of the bridge's calls into
// Neovim, now and then a :write) and the agent's reads and writes (each
// write its last view of the file with one of the file's own lines
// changed, as fs/write_text_file, announced first or not, or as the
// editor's MCP edit_file). Every line the user typed is in the buffer at
// the end, and
// the agent's last write that succeeded is in it too (issue 31 item 1).
func TestTypingWhileAgentWritesProperty(t *testing.T) {
	seeds := 100
	if testing.Short() {
		seeds = 30
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewSource(int64(seed)))
			e := newEnv(t, func(c *Config) { c.Debounce = time.Millisecond })
			base := []string{"l0", "l1", "l2", "l3", "l4", "l5"}
			p := e.file("f.txt", strings.Join(base, "\n")+"\n")
			ty := &typist{rnd: rand.New(rand.NewSource(int64(seed) * 7919)), ed: e.ed, path: p}
			te := &typingEditor{fakeEditor: e.ed, ty: ty, p: 300 + rnd.Intn(500)}
			e.b.ed = te
			e.ed.load(t, e.b, p)
			e.ask.answer = answer(OptKeepMine)

			var view string // the agent's last read or write of the file
			lastOK := ""
			for op := 0; op < 40; op++ {
				for n := rnd.Intn(3); n > 0; n-- {
					ty.typeLine()
				}
				if rnd.Intn(8) == 0 {
					ty.save()
				}
				if view == "" || rnd.Intn(3) == 0 {
					got, err := e.read(p, nil, nil)
					if err != nil {
						t.Fatalf("read: %v", err)
					}
					view = got
					continue
				}
				// The agent changes one of the file's own lines in its view.
				lines, eol := splitLines(view)
				var own []int
				for i, l := range lines {
					if !strings.HasPrefix(l, "user ") {
						own = append(own, i)
					}
				}
				i := own[rnd.Intn(len(own))]
				mark := fmt.Sprintf("agent %d", op)
				old := lines[i]
				lines[i] = strings.SplitN(old, " ", 2)[0] + " " + mark
				content := joinLines(lines, eol)
				var err error
				switch rnd.Intn(3) {
				case 0:
					// As the editor's MCP edit_file: the file read for the
					// agent (unseen), the line replaced in that text.
					ctx := context.Background()
					cur, rerr := e.b.ReadTextFile(WithUnseen(ctx), acp.ReadTextFileRequest{SessionId: "s", Path: p})
					if rerr != nil {
						t.Fatalf("edit's read: %v", rerr)
					}
					if strings.Count(cur.Content, old+"\n") != 1 {
						continue
					}
					edited := strings.Replace(cur.Content, old+"\n", lines[i]+"\n", 1)
					_, err = e.b.WriteTextFile(WithEditOf(ctx, cur.Content), acp.WriteTextFileRequest{SessionId: "s", Path: p, Content: edited})
				case 1:
					// Announced first, from the agent's own view.
					e.b.Announce(p, &view, content)
					fallthrough
				default:
					err = e.write(p, content)
				}
				if err == nil {
					view, lastOK = content, mark
				} else if ReasonOf(err) != ReasonBufferChanging && ReasonOf(err) != ReasonKeptMine {
					t.Fatalf("write: %v", err)
				}
			}
			// The watcher's last merges settle: polled.
			var lines []string
			eventually(t, "every typed line in the buffer", func() bool {
				lines = e.ed.lines(p)
				have := map[string]bool{}
				for _, l := range lines {
					have[l] = true
				}
				ty.mu.Lock()
				typed := ty.n // the watcher's merges may still ask the typist
				ty.mu.Unlock()
				for n := 1; n <= typed; n++ {
					if !have[fmt.Sprintf("user %d", n)] {
						return false
					}
				}
				return true
			})
			if lastOK != "" && !strings.Contains(strings.Join(lines, "\n"), lastOK) {
				t.Fatalf("the agent's last write (%s) is not in the buffer: %q", lastOK, lines)
			}
		})
	}
}
