package fsbridge

import "testing"

// TestWithin: a path is within a root when it is the root or below it,
// never a sibling that only shares the root's name as a prefix.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, root string
		want    bool
	}{
		{"/ws", "/ws", true},
		{"/ws/f.txt", "/ws", true},
		{"/ws/a/b", "/ws", true},
		{"/ws2/f.txt", "/ws", false},
		{"/ws", "/ws/", false},
		{"/ws/f.txt", "/ws/", true},
		{"/w", "/ws", false},
		{"/f.txt", "/", true},
		{"/", "/", true},
		{"", "/ws", false},
	} {
		if got := within(c.p, c.root); got != c.want {
			t.Errorf("within(%q, %q) = %v, want %v", c.p, c.root, got, c.want)
		}
	}
}
