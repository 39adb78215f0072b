package chatsearch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// saveChat writes a saved chat (transcript and index entry) under root.
func saveChat(t testing.TB, root, project, id, text string, mod time.Time) string {
	t.Helper()
	dir := filepath.Join(root, project)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, id+".txt")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	meta := fmt.Sprintf(`{"id":%q,"title":"chat %s","agent":"fake","project":"/p/%s"}`, id, id, project)
	if err := os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	return p
}

func collect(t *testing.T, root, query string, opt Options) ([]Chat, Summary, error) {
	t.Helper()
	var out []Chat
	sum, err := Search(context.Background(), root, query, opt, func(c Chat) { out = append(out, c) })
	return out, sum, err
}

func TestSearch(t *testing.T) {
	root := t.TempDir()
	t0 := time.Now()
	saveChat(t, root, "a-1", "old", "## You\nfix the Parser\n\n## fake\nThe parser is fixed.", t0.Add(-time.Hour))
	saveChat(t, root, "b-2", "new", "## You\nwhat about the lexer?\n\n## fake\nnothing about parsers here\nparser again", t0)
	saveChat(t, root, "b-2", "none", "## You\nhello", t0)
	for _, tc := range []struct {
		name  string
		query string
		want  []string // chat id: line who header_line text, in order
	}{
		{"smart case: lower matches both", "parser", []string{
			"new:5 fake 4 nothing about parsers here", "new:6 fake 4 parser again",
			"old:2 You 1 fix the Parser", "old:5 fake 4 The parser is fixed.",
		}},
		{"smart case: upper is exact", "Parser", []string{"old:2 You 1 fix the Parser"}},
		{"no hit", "zebra", nil},
		{"spaces kept", "about the", []string{"new:2 You 1 what about the lexer?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chats, sum, err := collect(t, root, tc.query, Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range chats {
				id := strings.TrimSuffix(filepath.Base(c.Path), ".txt")
				if c.Meta["title"] != "chat "+id {
					t.Errorf("%s: meta %v", id, c.Meta)
				}
				for _, h := range c.Hits {
					got = append(got, fmt.Sprintf("%s:%d %s %d %s", id, h.Line, h.Who, h.HeaderLine, h.Text))
					if !strings.EqualFold(h.Text[h.Col:h.Col+len(tc.query)], tc.query) {
						t.Errorf("col %d of %q is not the match", h.Col, h.Text)
					}
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("hits\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if sum.Chats != 3 || sum.Hits != len(tc.want) {
				t.Fatalf("summary %+v", sum)
			}
		})
	}
}

func TestSearchBounds(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("é", 300) + "needle" + strings.Repeat("x", 300)
	var many []string
	for range 30 {
		many = append(many, "a needle")
	}
	saveChat(t, root, "p", "long", "## You\n"+long, time.Now())
	saveChat(t, root, "p", "many", strings.Join(many, "\n"), time.Now().Add(-time.Minute))
	chats, sum, err := collect(t, root, "needle", Options{Workers: 1, MaxPerChat: 5, MaxText: 60})
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 2 || len(chats[0].Hits) != 1 || len(chats[1].Hits) != 5 || !chats[1].More || chats[0].More {
		t.Fatalf("chats %+v", chats)
	}
	h := chats[0].Hits[0]
	if len(h.Text) > 70 || !strings.HasPrefix(h.Text, "…") || !strings.HasSuffix(h.Text, "…") || h.Text[h.Col:h.Col+6] != "needle" {
		t.Fatalf("excerpt %q col %d", h.Text, h.Col)
	}
	if h.Who != "You" || h.HeaderLine != 1 || h.Line != 2 {
		t.Fatalf("hit %+v", h)
	}
	if sum.Truncated {
		t.Fatal("truncated")
	}
	// MaxHits stops the search.
	chats, sum, err = collect(t, root, "needle", Options{Workers: 1, MaxHits: 3})
	if err != nil || !sum.Truncated || sum.Hits != 3 {
		t.Fatalf("summary %+v err %v chats %d", sum, err, len(chats))
	}
}

func TestSearchBadInput(t *testing.T) {
	root := t.TempDir()
	saveChat(t, root, "p", "ok", "## You\nneedle", time.Now())
	// A directory named like a chat, an unreadable one, a chat with no
	// index entry, binary bytes: skipped or found, never a failure.
	if err := os.MkdirAll(filepath.Join(root, "p", "dir.txt"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "bin.txt"), []byte("\x00\xff needle \xfe"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "stray.txt"), []byte("needle"), 0o600); err != nil {
		t.Fatal(err)
	}
	chats, _, err := collect(t, root, "needle", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 2 {
		t.Fatalf("chats %+v", chats)
	}
	for _, c := range chats {
		if strings.HasSuffix(c.Path, "bin.txt") && (c.Meta != nil || !strings.Contains(c.Hits[0].Text, "needle")) {
			t.Fatalf("bin chat %+v", c)
		}
	}
	if _, _, err := collect(t, root, "  ", Options{}); !errors.Is(err, ErrEmptyQuery) {
		t.Fatalf("empty query: %v", err)
	}
	if chats, _, err := collect(t, filepath.Join(root, "nothing"), "needle", Options{}); err != nil || len(chats) != 0 {
		t.Fatalf("no root: %v %v", chats, err)
	}
	// Only the named project; a name that climbs out is ignored.
	chats, _, err = collect(t, root, "needle", Options{Dirs: []string{"..", "q"}})
	if err != nil || len(chats) != 0 {
		t.Fatalf("dirs: %v %v", chats, err)
	}
}

func TestSearchCancelled(t *testing.T) {
	root := t.TempDir()
	for i := range 50 {
		saveChat(t, root, "p", fmt.Sprint(i), "needle", time.Now())
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := Search(ctx, root, "needle", Options{Workers: 2}, func(Chat) {
		n++
		cancel()
	})
	if !errors.Is(err, context.Canceled) || n >= 50 {
		t.Fatalf("err %v after %d chats", err, n)
	}
}
