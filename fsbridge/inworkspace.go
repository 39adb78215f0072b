package fsbridge

import (
	"io/fs"
	"os"
	"path/filepath"
)

// InWorkspace reports, for each path (absolute), whether it, resolved as
// the kernel would, is in the workspace or a root it allows. It asks
// nothing. A workspace's diagnostics name hundreds of files in a few
// directories: each directory is resolved once, and read once for the
// types of its entries when many of its files are asked, instead of one
// lstat per file. A nil Bridge reports none.
func (b *Bridge) InWorkspace(paths ...string) []bool {
	out := make([]bool, len(paths))
	if b == nil {
		return out
	}
	m := manyPaths{want: map[string]int{}, dirs: map[string]*dirEntries{}}
	for _, p := range paths {
		if simplePath(p) {
			m.want[filepath.Dir(p)+string(filepath.Separator)]++
		}
	}
	for i, p := range paths {
		r, err := m.resolve(p)
		out[i] = err == nil && b.inWorkspace(r.Path)
	}
	return out
}

// manyPaths resolves paths of a few directories.
type manyPaths struct {
	want map[string]int // how many names are asked in each directory ("dir/")
	dirs map[string]*dirEntries
}

// dirEntries is one directory, resolved.
type dirEntries struct {
	path  string                 // resolved; "" when it is not simply an existing directory
	types map[string]fs.FileMode // its entries' types, when read (a name not there: lstat)
}

// readDirAt is how many names asked in one directory make it read whole.
const readDirAt = 16

// simplePath is a clean absolute path other than the root: its directory
// resolved, then its name, is how resolve walks it.
func simplePath(p string) bool {
	return filepath.IsAbs(p) && p == filepath.Clean(p) && p != string(filepath.Separator)
}

// resolve is resolve(p), p's directory resolved once for all the paths of
// one call. A simple p whose name is there and not a symlink resolves to
// its directory's resolution and that name, as resolve walks it; any other
// p is resolved whole.
func (m *manyPaths) resolve(p string) (resolution, error) {
	if !simplePath(p) {
		return resolve(p)
	}
	dir, name := filepath.Split(p)
	d := m.dirs[dir]
	if d == nil {
		d = &dirEntries{}
		// The trailing separator: a directory, or ENOTDIR.
		if r, err := resolve(dir); err == nil && r.Missing == 0 && !r.Phantom {
			d.path = r.Path
			if n := m.want[dir]; n >= readDirAt {
				d.types = readTypes(d.path, 8*n)
			}
		}
		m.dirs[dir] = d
	}
	if d.path == "" {
		return resolve(p)
	}
	next := filepath.Join(d.path, name)
	t, known := d.types[name]
	if !known {
		fi, err := os.Lstat(next)
		if err != nil {
			return resolve(p)
		}
		t = fi.Mode().Type()
	}
	if t&fs.ModeSymlink != 0 {
		return resolve(p)
	}
	return resolution{Path: next}, nil
}

// readTypes reads the types of directory dir's entries, at most about max
// of them (a huge directory is not read whole for a few names); nil when
// it cannot be read.
func readTypes(dir string, max int) map[string]fs.FileMode {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	types := map[string]fs.FileMode{}
	for len(types) < max {
		es, err := f.ReadDir(256)
		for _, e := range es {
			types[e.Name()] = e.Type()
		}
		if err != nil {
			break
		}
	}
	return types
}
