package fsbridge

import (
	"path/filepath"
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
