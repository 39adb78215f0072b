package registry

import (
	"archive/tar"
	"archive/zip"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// limits bound what one archive may unpack to.
type limits struct {
	maxBytes   int64
	maxEntries int
	bytes      int64
	entries    int
	reported   int64
	report     func(n int64)
}

func (l *limits) entry() error {
	l.entries++
	if l.entries > l.maxEntries {
		return fmt.Errorf("more than %d entries", l.maxEntries)
	}
	return nil
}

func (l *limits) add(n int64) {
	l.bytes += n
	if l.report != nil && l.bytes-l.reported >= 1<<20 {
		l.reported = l.bytes
		l.report(l.bytes)
	}
}

// extractor writes archive entries under root, refusing anything that would
// land outside it: absolute names, ".." components, writes through a
// symlink, links pointing out.
type extractor struct {
	ctx   context.Context
	root  string
	lim   *limits
	links map[string]bool // entries that are symlinks (slash paths)
	files map[string]bool // entries that are regular files
}

// unpack unpacks archive (of format) into the empty directory root. A raw
// executable is copied to root/rawName.
func unpack(ctx context.Context, format, archive, root, rawName string, lim *limits) error {
	x := &extractor{ctx: ctx, root: root, lim: lim, links: map[string]bool{}, files: map[string]bool{}}
	var err error
	switch format {
	case formatZip:
		err = x.zip(archive)
	case formatRaw:
		err = x.raw(archive, rawName)
	default:
		err = x.tarFile(format, archive)
	}
	if err == nil && lim.report != nil {
		lim.report(lim.bytes)
	}
	return err
}

// cleanRel returns an archive entry name as a clean slash path relative to
// the root ("" for the root itself), or an error when it would leave it.
func cleanRel(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("name %q has a NUL byte", name)
	}
	n := strings.ReplaceAll(name, `\`, "/")
	if strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':') {
		return "", fmt.Errorf("absolute name %q", name)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return "", fmt.Errorf("name %q leaves the directory (..)", name)
		}
	}
	c := path.Clean(n)
	if c == "." {
		return "", nil
	}
	return c, nil
}

// place checks that entry rel may be created and returns its path: no
// parent of it is a symlink or a file, and nothing but a regular file
// (replaced) is there already.
func (x *extractor) place(rel string) (string, error) {
	if err := x.ctx.Err(); err != nil {
		return "", err
	}
	if err := x.lim.entry(); err != nil {
		return "", err
	}
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if x.links[dir] {
			return "", fmt.Errorf("%q goes through the symlink %q", rel, dir)
		}
		if x.files[dir] {
			return "", fmt.Errorf("%q goes through the file %q", rel, dir)
		}
	}
	p := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	fi, err := os.Lstat(p)
	switch {
	case err == nil && fi.Mode().IsRegular():
		if err := os.Remove(p); err != nil {
			return "", err
		}
		delete(x.files, rel)
	case err == nil:
		return "", fmt.Errorf("%q is in the archive twice", rel)
	case !os.IsNotExist(err):
		return "", err
	}
	return p, nil
}

func (x *extractor) dir(name string, perm fs.FileMode) error {
	rel, err := cleanRel(name)
	if err != nil || rel == "" {
		return err
	}
	if err := x.lim.entry(); err != nil {
		return err
	}
	for dir := rel; dir != "."; dir = path.Dir(dir) {
		if x.links[dir] || x.files[dir] {
			return fmt.Errorf("directory %q goes through %q, which is not a directory", rel, dir)
		}
	}
	p := filepath.Join(x.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(p, 0o755); err != nil {
		return err
	}
	return os.Chmod(p, safePerm(perm)|0o700)
}

// safePerm keeps an entry's permission bits (executables stay executable)
// but never setuid/setgid/sticky or write access for group and others.
func safePerm(perm fs.FileMode) fs.FileMode { return perm.Perm() &^ 0o022 }

func (x *extractor) file(name string, r io.Reader, perm fs.FileMode) error {
	rel, err := cleanRel(name)
	if err != nil {
		return err
	}
	if rel == "" {
		return fmt.Errorf("file entry %q names the root", name)
	}
	p, err := x.place(rel)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	left := x.lim.maxBytes - x.lim.bytes
	n, err := io.Copy(f, io.LimitReader(ctxReader{x.ctx, r}, left+1))
	x.lim.add(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if n > left {
		return fmt.Errorf("unpacks to more than %d bytes", x.lim.maxBytes)
	}
	x.files[rel] = true
	return os.Chmod(p, safePerm(perm)|0o600) // the owner can always read and write
}

func (x *extractor) symlink(name, target string) error {
	rel, err := cleanRel(name)
	if err != nil {
		return err
	}
	if rel == "" {
		return fmt.Errorf("symlink entry %q names the root", name)
	}
	t := strings.ReplaceAll(target, `\`, "/")
	if t == "" || strings.ContainsRune(t, 0) || strings.HasPrefix(t, "/") || (len(t) >= 2 && t[1] == ':') {
		return fmt.Errorf("symlink %q -> %q points outside the install directory", rel, target)
	}
	if to := path.Join(path.Dir(rel), t); to == ".." || strings.HasPrefix(to, "../") {
		return fmt.Errorf("symlink %q -> %q points outside the install directory", rel, target)
	}
	p, err := x.place(rel)
	if err != nil {
		return err
	}
	if err := os.Symlink(filepath.FromSlash(t), p); err != nil {
		return err
	}
	x.links[rel] = true
	return nil
}

// hardlink copies an earlier regular file of the archive.
func (x *extractor) hardlink(name, target string) error {
	src, err := cleanRel(target)
	if err != nil {
		return err
	}
	if !x.files[src] {
		return fmt.Errorf("hard link %q -> %q: no such file earlier in the archive", name, target)
	}
	p := filepath.Join(x.root, filepath.FromSlash(src))
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return x.file(name, f, fi.Mode())
}

func (x *extractor) tarFile(format, archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	switch format {
	case formatTarGz:
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	case formatTarBz2:
		r = bzip2.NewReader(f)
	}
	tr := tar.NewReader(r)
	seen := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			if !seen {
				return errors.New("empty archive")
			}
			return nil
		}
		if err != nil {
			return err
		}
		seen = true
		mode := fs.FileMode(hdr.Mode).Perm()
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = x.dir(hdr.Name, mode)
		case tar.TypeReg, '\x00': // '\x00' is the old regular-file flag
			err = x.file(hdr.Name, tr, mode)
		case tar.TypeSymlink:
			err = x.symlink(hdr.Name, hdr.Linkname)
		case tar.TypeLink:
			err = x.hardlink(hdr.Name, hdr.Linkname)
		default:
			// Devices, FIFOs and the like have no place in an agent's
			// archive: counted, not created.
			err = x.lim.entry()
		}
		if err != nil {
			return err
		}
	}
}

func (x *extractor) zip(archive string) error {
	zr, err := zip.OpenReader(archive)
	if err != nil {
		return err
	}
	defer zr.Close()
	if len(zr.File) == 0 {
		return errors.New("empty archive")
	}
	if len(zr.File) > x.lim.maxEntries {
		return fmt.Errorf("more than %d entries", x.lim.maxEntries)
	}
	for _, zf := range zr.File {
		if err := x.zipEntry(zf); err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) zipEntry(zf *zip.File) error {
	mode := zf.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		target, err := io.ReadAll(io.LimitReader(rc, 4096))
		if err != nil {
			return err
		}
		return x.symlink(zf.Name, string(target))
	case mode.IsDir() || strings.HasSuffix(zf.Name, "/"):
		return x.dir(zf.Name, mode|0o755)
	case mode.IsRegular():
		rc, err := zf.Open()
		if err != nil {
			return err
		}
		defer rc.Close()
		return x.file(zf.Name, rc, mode)
	}
	return x.lim.entry()
}

// raw installs a download that is the executable itself.
func (x *extractor) raw(archive, name string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return x.file(name, f, 0o755)
}

// ctxReader fails reads once ctx is done, so a cancelled install stops
// mid-file.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// within says whether p is root or below it.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkLinks resolves every symlink under root as the system will and
// fails when one leads out of it (each link points inside on its own, but
// a chain such as a -> "." and b -> "a/.." can still leave).
func checkLinks(root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		to, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil // dangling: it pointed inside when written, and leads nowhere now
		}
		if !within(real, to) {
			rel, _ := filepath.Rel(root, p)
			return fmt.Errorf("symlink %s leads outside the install directory", filepath.ToSlash(rel))
		}
		return nil
	})
}

// findCmd returns the slash path under root of the agent's command: rel
// itself, else the one file whose path ends with /rel (archives that wrap
// everything in a top directory). It makes the command executable.
func findCmd(root, rel string) (string, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Lstat(p); err != nil {
		var found []string
		_ = filepath.WalkDir(root, func(q string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				r, _ := filepath.Rel(root, q)
				if r = filepath.ToSlash(r); strings.HasSuffix(r, "/"+rel) {
					found = append(found, r)
				}
			}
			return nil
		})
		sort.Strings(found)
		switch len(found) {
		case 0:
			return "", fmt.Errorf("the archive has no %s", rel)
		case 1:
			rel = found[0]
			p = filepath.Join(root, filepath.FromSlash(rel))
		default:
			return "", fmt.Errorf("the archive has no %s but several candidates: %s", rel, strings.Join(found, ", "))
		}
	}
	fi, err := os.Stat(p) // follows a symlink, which checkLinks kept inside
	if err != nil {
		return "", fmt.Errorf("command %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("command %s is not a file", rel)
	}
	if fi.Mode().Perm()&0o100 == 0 {
		if err := os.Chmod(p, fi.Mode().Perm()|0o755); err != nil {
			return "", err
		}
	}
	return rel, nil
}
