package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// fakeBridge is a Bridge over the disk: a loaded file's buffer is shown.
type fakeBridge struct {
	shown  map[string]string // the loaded files' buffers
	writes []string
}

func (b *fakeBridge) Loaded(path string) bool { _, ok := b.shown[path]; return ok }

func (b *fakeBridge) Shown(ctx context.Context, path string) (string, bool, error) {
	return b.shown[path], true, nil
}

func (b *fakeBridge) WriteUser(ctx context.Context, path string, t fsbridge.FileText) error {
	b.writes = append(b.writes, path)
	return WriteRaw(path, File{Data: t.Text, Exists: t.Exists})
}

// holdingBridge is a fakeBridge that is a Holder, and notes the calls made
// without the file held.
type holdingBridge struct {
	fakeBridge
	held   map[string]bool
	holds  []string
	unheld []string
}

type heldKey struct{}

func (b *holdingBridge) Hold(ctx context.Context, path string) (context.Context, func()) {
	b.held[path] = true
	b.holds = append(b.holds, path)
	return context.WithValue(ctx, heldKey{}, path), func() { b.held[path] = false }
}

func (b *holdingBridge) check(ctx context.Context, call, path string) {
	if p, _ := ctx.Value(heldKey{}).(string); p != path || !b.held[path] {
		b.unheld = append(b.unheld, call+" "+path)
	}
}

func (b *holdingBridge) Shown(ctx context.Context, path string) (string, bool, error) {
	b.check(ctx, "Shown", path)
	return b.fakeBridge.Shown(ctx, path)
}

func (b *holdingBridge) WriteUser(ctx context.Context, path string, t fsbridge.FileText) error {
	b.check(ctx, "WriteUser", path)
	return b.fakeBridge.WriteUser(ctx, path, t)
}

// TestWriteHoldsTheFile: a rewind's write of a file through a Holder reads
// the buffer's text and writes the file with it held, and releases it; the
// buffer's unsaved line is merged in either way, and a bridge that cannot
// hold is written through all the same.
func TestWriteHoldsTheFile(t *testing.T) {
	for _, hold := range []bool{true, false} {
		dir := t.TempDir()
		p := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(p, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fb := fakeBridge{shown: map[string]string{p: "a\nb\nc\nd\n// unsaved\n"}}
		var b Bridge = &fb
		hb := &holdingBridge{fakeBridge: fb, held: map[string]bool{}}
		if hold {
			b = hb
		}
		if err := Write(context.Background(), b, p, File{Data: "A\nb\nc\nd\n", Exists: true}); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if want := "A\nb\nc\nd\n// unsaved\n"; string(got) != want {
			t.Errorf("hold %v: the file holds %q, want %q", hold, got, want)
		}
		if !hold {
			continue
		}
		if len(hb.unheld) > 0 {
			t.Errorf("called without the file held: %v", hb.unheld)
		}
		if len(hb.holds) != 1 || hb.held[p] {
			t.Errorf("holds %v, still held %v: want one, released", hb.holds, hb.held[p])
		}
	}
}
