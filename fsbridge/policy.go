package fsbridge

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckRead applies the workspace policy to a read of path (absolute)
// without reading it, as ReadTextFile does first: a path outside the
// workspace, or leading out of it through a symlink, asks the user (or
// follows their "always" answer). For what reads a file by other means
// (a language server's query, the editor's selection).
func (b *Bridge) CheckRead(ctx context.Context, path string) error {
	_, err := b.check(ctx, path, "read")
	return err
}

// InWorkspace reports, for each path (absolute), whether it, resolved as
// the kernel would, is in the workspace or a root it allows. It asks
// nothing. Paths in one directory share that directory's resolution (a
// workspace's diagnostics name a few hundred files in a few directories).
// A nil Bridge reports none.
func (b *Bridge) InWorkspace(paths ...string) []bool {
	out := make([]bool, len(paths))
	if b == nil {
		return out
	}
	dirs := map[string]string{}
	for i, p := range paths {
		r, err := resolveInDir(dirs, p)
		out[i] = err == nil && b.inWorkspace(r.Path)
	}
	return out
}

// resolveInDir is resolve(p), p's directory resolved once for all the
// paths of one call (dirs: each directory's resolution, "" when it is
// not simply an existing directory). A clean p whose last component is
// there and not a symlink resolves to its directory's resolution and
// that name, as resolve would walk it; any other p is resolved whole.
func resolveInDir(dirs map[string]string, p string) (resolution, error) {
	if !filepath.IsAbs(p) || p != filepath.Clean(p) || p == string(filepath.Separator) {
		return resolve(p)
	}
	dir, name := filepath.Split(p)
	rd, seen := dirs[dir]
	if !seen {
		if r, err := resolve(dir); err == nil && r.Missing == 0 && !r.Phantom {
			rd = r.Path
		}
		dirs[dir] = rd
	}
	if rd == "" {
		return resolve(p)
	}
	next := filepath.Join(rd, name)
	if fi, err := os.Lstat(next); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return resolve(p)
	}
	return resolution{Path: next}, nil
}
