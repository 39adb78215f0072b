package fsbridge

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// InWorkspace of many paths at once (their directories resolved once)
// answers for each what resolving it alone answers, whatever links lead
// in or out, and whatever order the paths come in.
func TestInWorkspaceManyAsOne(t *testing.T) {
	var ws string
	e := newEnv(t, func(c *Config) {
		ws = resolveFixture(t, c.Root)
		c.Root = ws
	})
	rels := []string{
		"f", "sub/g", "sub/deep/x", "sub/f", "sub/back", "sub/nothing", "sub/deep",
		"out", "out/secret", "out/o/h", "rout/secret", "up/out/secret", "up/ws/f",
		"dot/f", "fl", "dangle", "dangleout", "loop", "la", "c0", "c42", "abs",
		"outin/g", "empty/h", "fifo", "f/x", "missing/x", "sub/../out/secret",
		"sub/./g", "sub//g", "", "sub/",
	}
	// Enough names in ws/ that it is read whole; its chain of links c0 to
	// c42 leads to f.
	for i := 0; i <= 42; i++ {
		rels = append(rels, "c"+strconv.Itoa(i))
	}
	// A directory too big to be read whole for these few names: a link out
	// among them, and names it holds past what is read.
	big := filepath.Join(ws, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		if err := os.WriteFile(filepath.Join(big, fmt.Sprintf("f%03d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(filepath.Dir(ws), "out", "secret"), filepath.Join(big, "zlink")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i += 25 {
		rels = append(rels, fmt.Sprintf("big/f%03d", i))
	}
	rels = append(rels, "big/zlink", "big/none")
	var paths []string
	for _, rel := range rels {
		paths = append(paths, ws+"/"+rel)
	}
	// The same again, backwards: the directories are known by then.
	for i := len(rels) - 1; i >= 0; i-- {
		paths = append(paths, ws+"/"+rels[i])
	}
	paths = append(paths, filepath.Dir(ws)+"/out/secret", "/", "relative")
	got := e.b.InWorkspace(paths...)
	if len(got) != len(paths) {
		t.Fatalf("%d answers for %d paths", len(got), len(paths))
	}
	inside := 0
	for i, p := range paths {
		r, err := resolve(p)
		want := err == nil && e.b.inWorkspace(r.Path)
		if got[i] != want {
			t.Errorf("InWorkspace(%q) = %v, resolved alone %v (%+v, %v)", p, got[i], want, r, err)
		}
		if want {
			inside++
		}
	}
	// Both answers are represented.
	if inside == 0 || inside == len(paths) {
		t.Fatalf("%d of %d paths inside", inside, len(paths))
	}
	if got := (*Bridge)(nil).InWorkspace(ws + "/f"); len(got) != 1 || got[0] {
		t.Fatalf("nil bridge: %v", got)
	}
}
