package approval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInsidePairedWithLua runs Inside over the one table of cases that
// tests/inside_test.lua runs Lua's rule over (testdata/rules/inside.json).
func TestInsidePairedWithLua(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "rules", "inside.json"))
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Dirs  []string          `json:"dirs"`
		Links map[string]string `json:"links"`
		Cases []struct {
			Real  string   `json:"real"`
			Roots []string `json:"roots"`
			Want  bool     `json:"want"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range spec.Dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range spec.Links {
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	expand := func(p string) string { return strings.Replace(p, "$T", dir, 1) }
	if len(spec.Cases) < 10 {
		t.Fatalf("only %d cases read", len(spec.Cases))
	}
	for _, c := range spec.Cases {
		roots := make([]string, len(c.Roots))
		for i, r := range c.Roots {
			roots[i] = expand(r)
		}
		if got := Inside(expand(c.Real), roots); got != c.Want {
			t.Errorf("Inside(%s, %v) = %v, want %v", c.Real, c.Roots, got, c.Want)
		}
	}
}
