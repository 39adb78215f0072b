package fsbridge

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// resolveFixture lays out a tree full of awkward links under root/ws and
// returns root/ws: links in and out, relative and absolute, chains, loops,
// dangling links, links to files used as directories, a FIFO.
func resolveFixture(tb testing.TB, root string) string {
	tb.Helper()
	ws := filepath.Join(root, "ws")
	out := filepath.Join(root, "out")
	for _, d := range []string{ws + "/sub/deep", out + "/o"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for p, s := range map[string]string{ws + "/f": "in\n", ws + "/sub/g": "g\n", out + "/secret": "SECRET\n", out + "/o/h": "h\n"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	links := map[string]string{
		"ws/out":        out,
		"ws/rout":       "../out",
		"ws/up":         "..",
		"ws/dot":        ".",
		"ws/sub/back":   "../..",
		"ws/sub/f":      "../f",
		"ws/fl":         "f",
		"ws/dangle":     "nowhere/x",
		"ws/dangleout":  out + "/nope",
		"ws/loop":       "loop",
		"ws/la":         "lb",
		"ws/lb":         "la",
		"ws/abs":        ws + "/sub/../f",
		"ws/outin":      out + "/../ws/sub",
		"ws/empty":      "sub/deep/../../out/o",
		"ws/sub/deep/x": "../../../out/o/h",
	}
	for i := 0; i < 42; i++ {
		links["ws/c"+strconv.Itoa(i)] = "c" + strconv.Itoa(i+1)
	}
	links["ws/c42"] = "f"
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := unix.Mkfifo(ws+"/fifo", 0o644); err != nil {
		tb.Fatal(err)
	}
	return ws
}

// kernelPath opens p as the kernel would (following every link, without
// reading: O_PATH) and returns the opened file's real path.
func kernelPath(p string) (string, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
}

// checkResolve compares resolve(p) with the kernel's own resolution.
func checkResolve(t *testing.T, ws, p string) {
	t.Helper()
	r, err := resolve(p)
	kp, kerr := kernelPath(p)
	if kerr == nil {
		// The kernel found a file: resolve must find the same one.
		if err != nil || r.Missing > 0 || r.Phantom || r.Path != kp {
			t.Fatalf("resolve(%q) = %+v, %v; the kernel opens %s", p, r, err, kp)
		}
		return
	}
	if errors.Is(kerr, unix.ENOENT) || errors.Is(kerr, unix.ENOTDIR) || errors.Is(kerr, unix.ELOOP) || errors.Is(kerr, unix.ENAMETOOLONG) || errors.Is(kerr, unix.EINVAL) {
		// The kernel cannot open it: resolve must not claim it exists.
		if err == nil && r.Missing == 0 && !r.Phantom {
			t.Fatalf("resolve(%q) = %+v: exists, but the kernel says %v", p, r, kerr)
		}
	}
	if err != nil {
		return
	}
	if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
		t.Fatalf("resolve(%q) = %q: not absolute and clean", p, r.Path)
	}
	// What a write would create: the deepest existing directory must be
	// exactly where the kernel leads, so the new file lands where checked.
	if r.Missing > 0 && !r.Phantom {
		dir := r.Path
		for i := 0; i < r.Missing; i++ {
			dir = filepath.Dir(dir)
		}
		if kd, err := kernelPath(dir); err != nil || kd != dir {
			t.Fatalf("resolve(%q) = %+v: its existing parent %s is %q (%v) for the kernel", p, r, dir, kd, err)
		}
	}
}

// FuzzResolve checks resolve against the kernel for any path below a
// workspace full of hostile links.
func FuzzResolve(f *testing.F) {
	ws := resolveFixture(f, f.TempDir())
	for _, s := range []string{
		"f", "out/secret", "nonexistent/../out/secret", "missing/../out/.bashrc",
		"sub/back/ws/out/../ws/f", "up/out/o/h", "dot/dot/f", "rout/../ws/fl",
		"fl/..", "f/x", "dangle", "dangleout", "loop", "la/x", "c0", "c2",
		"abs", "outin/g", "empty/h", "sub/deep/x", "sub/f/../f", "fifo",
		"a/b/c/../../..", "..", "../..", "/", "", "sub//deep///../g", "new/dir/../../f",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		if strings.IndexByte(rel, 0) >= 0 || len(rel) > 512 {
			return
		}
		checkResolve(t, ws, ws+"/"+rel)
	})
}

// TestResolveMatchesKernel runs the fuzz seeds (and corpus) as a table.
func TestResolveMatchesKernel(t *testing.T) {
	ws := resolveFixture(t, t.TempDir())
	for _, rel := range []string{
		"f", "out/secret", "nonexistent/../out/secret", "sub/back/ws/out/../ws/f",
		"up/out/o/h", "fl/..", "f/x", "dangle", "dangleout", "loop", "c0", "c1",
		"abs", "outin/g", "empty/h", "sub/deep/x", "fifo", "new/dir/../../f",
	} {
		checkResolve(t, ws, ws+"/"+rel)
	}
}
