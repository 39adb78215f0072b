package review

import (
	"context"
	"testing"
)

// heldKey marks the context holdingFiles.Hold returns.
type heldKey struct{}

// holdingFiles is fakeFiles as a Holder: it notes every call made
// without the file held, and every hold.
type holdingFiles struct {
	fakeFiles
	held   map[string]bool
	holds  []string
	unheld []string
}

func (f *holdingFiles) Hold(ctx context.Context, path string) (context.Context, func()) {
	if f.held[path] {
		panic("held twice: " + path)
	}
	f.held[path] = true
	f.holds = append(f.holds, path)
	return context.WithValue(ctx, heldKey{}, path), func() { f.held[path] = false }
}

func (f *holdingFiles) check(ctx context.Context, call, path string) {
	if h, _ := ctx.Value(heldKey{}).(string); h != path || !f.held[path] {
		f.unheld = append(f.unheld, call)
	}
}

func (f *holdingFiles) Shown(ctx context.Context, path string) (string, bool, error) {
	f.check(ctx, "Shown", path)
	return f.fakeFiles.Shown(ctx, path)
}

func (f *holdingFiles) WriteUser(ctx context.Context, path string, t Text) error {
	f.check(ctx, "WriteUser", path)
	return f.fakeFiles.WriteUser(ctx, path, t)
}

func (f *holdingFiles) DiskHolds(path string, t Text) bool {
	if !f.held[path] {
		f.unheld = append(f.unheld, "DiskHolds")
	}
	return f.fakeFiles.DiskHolds(path, t)
}

// A decision holds its file (Holder) from reading the text shown to
// writing the reject, each file on its own (RejectAll), and lets it go:
// no report of the file can land between the two and drop the reject's
// undo. The undo then works.
func TestTrackerDecideHoldsTheFile(t *testing.T) {
	for _, c := range []struct {
		action string
		line   int
		holds  int
	}{
		{Reject, 0, 1},
		{RejectFile, 0, 1},
		{Keep, 0, 1},
		{Reverted, 0, 1},
		{RejectAll, -1, 1},
	} {
		t.Run(c.action, func(t *testing.T) {
			tr := NewTracker(nil)
			before, after := tx("a", "b", "c", "d", "e"), tx("A", "b", "c", "d", "E")
			tr.Agent(p, before, after)
			fs := &holdingFiles{fakeFiles: fakeFiles{shown: after, disk: after}, held: map[string]bool{}}
			if c.action == Reverted {
				fs.shown = tx("a", "b", "c", "d", "E") // the editor put the hunk back
			}
			if _, err := tr.Decide(context.Background(), fs, c.action, p, c.line); err != nil {
				t.Fatal(err)
			}
			if len(fs.unheld) > 0 {
				t.Errorf("called without the file held: %v", fs.unheld)
			}
			if len(fs.holds) != c.holds || fs.held[p] {
				t.Errorf("holds %v, still held %v: want %d, released", fs.holds, fs.held[p], c.holds)
			}
			if c.action == Keep {
				return
			}
			tr.User(p, after) // u
			if hs := hunks(t, tr.Rec); len(hs) != 2 {
				t.Errorf("after u: %+v, want both hunks back", hs)
			}
		})
	}
}
