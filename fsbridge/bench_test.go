package fsbridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func benchBridge(b *testing.B) (*Bridge, *fakeEditor, string) {
	root, _ := filepath.EvalSymlinks(b.TempDir())
	ed := newFakeEditor()
	br, err := New(Config{Root: root, NoWatch: true}, ed, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	return br, ed, root
}

// BenchmarkReadUnloaded1MiB: fs/read_text_file of a 1 MiB file with no buffer
// (disk read, UTF-8 check, snapshot kept), whole file and a line:1 limit:2000 window.
func BenchmarkReadUnloaded1MiB(b *testing.B) {
	br, _, root := benchBridge(b)
	p := filepath.Join(root, "f.txt")
	line := strings.Repeat("x", 63) + "\n"
	os.WriteFile(p, []byte(strings.Repeat(line, 1<<20/64)), 0o644)
	for _, win := range []bool{false, true} {
		b.Run(fmt.Sprintf("window=%v", win), func(b *testing.B) {
			req := acp.ReadTextFileRequest{Path: p}
			if win {
				req.Line, req.Limit = ip(1), ip(2000)
			}
			b.SetBytes(1 << 20)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := br.ReadTextFile(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadLoaded10kLines: fs/read_text_file answered from a loaded
// 10,000-line buffer through the fake editor (no RPC cost included).
func BenchmarkReadLoaded10kLines(b *testing.B) {
	br, ed, root := benchBridge(b)
	p := filepath.Join(root, "f.go")
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "\tfmt.Println(%d) // some typical source line\n", i)
	}
	os.WriteFile(p, []byte(sb.String()), 0o644)
	ed.load(&testing.T{}, br, p)
	req := acp.ReadTextFileRequest{Path: p}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := br.ReadTextFile(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteLoaded10kLines: an agent edit of 3 lines in a 10,000-line
// buffer: 3-way merge + Diff + fake Apply (which writes the file).
func BenchmarkWriteLoaded10kLines(b *testing.B) {
	br, ed, root := benchBridge(b)
	p := filepath.Join(root, "f.go")
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tfmt.Println(%d) // some typical source line", i)
	}
	os.WriteFile(p, []byte(joinLines(lines, true)), 0o644)
	ed.load(&testing.T{}, br, p)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := br.ReadTextFile(ctx, acp.ReadTextFileRequest{Path: p}); err != nil {
			b.Fatal(err)
		}
		next := append([]string(nil), lines...)
		for _, k := range []int{100, 5000, 9000} {
			next[k] = fmt.Sprintf("edited %d", i)
		}
		if _, err := br.WriteTextFile(ctx, acp.WriteTextFileRequest{Path: p, Content: joinLines(next, true)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteModified10kLines: the same edit into a 10,000-line buffer
// with an unsaved line of the user's: 3-way merge, the change applied to
// the disk's text too, fake Put, an atomic write of the file (fsync'd),
// fake Took.
func BenchmarkWriteModified10kLines(b *testing.B) {
	br, ed, root := benchBridge(b)
	p := filepath.Join(root, "f.go")
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tfmt.Println(%d) // some typical source line", i)
	}
	os.WriteFile(p, []byte(joinLines(lines, true)), 0o644)
	ed.load(&testing.T{}, br, p)
	ed.edit(p, func(l []string) []string { return append([]string{"// the user's unsaved line"}, l...) })
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		got, err := br.ReadTextFile(ctx, acp.ReadTextFileRequest{Path: p})
		if err != nil {
			b.Fatal(err)
		}
		next, eol := splitLines(got.Content)
		for _, k := range []int{100, 5000, 9000} {
			next[k] = fmt.Sprintf("edited %d", i)
		}
		if _, err := br.WriteTextFile(ctx, acp.WriteTextFileRequest{Path: p, Content: joinLines(next, eol)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiff10kLines3Edits(b *testing.B) {
	a := make([]string, 10000)
	for i := range a {
		a[i] = fmt.Sprintf("line %d", i)
	}
	c := append([]string(nil), a...)
	c[10], c[5000], c[9990] = "x", "y", "z"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Diff(a, c)
	}
}
