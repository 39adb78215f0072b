// Package pathmap translates paths between an agent that sees the files
// under other paths (in a container, on another machine, in another mount
// namespace) and the user's machine, where the files are the user's
// buffers. A path is translated only when it lies under a mapped root;
// anything else is refused with an error that says so, never guessed.
//
// The agent's side is POSIX (it runs on Linux in a container or over ssh);
// the local side is this machine's.
package pathmap

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Root is one mapped directory: Agent as the agent sees it, Local as the
// user's machine has it.
type Root struct {
	Agent string
	Local string
}

// Map translates paths under its roots. A nil *Map translates nothing:
// every path is the same on both sides.
type Map struct {
	roots []Root // longest agent root first
}

// ErrOutside marks a path under no mapped root.
var ErrOutside = errors.New("outside every mapped root")

// New returns the map of roots, agent root -> local root; both must be
// absolute. An empty map is nil.
func New(roots map[string]string) (*Map, error) {
	if len(roots) == 0 {
		return nil, nil
	}
	m := &Map{}
	for a, l := range roots {
		if !path.IsAbs(a) {
			return nil, fmt.Errorf("path_map: the agent's root %q is not absolute", a)
		}
		if !filepath.IsAbs(l) {
			return nil, fmt.Errorf("path_map: the local root %q (for %s) is not absolute", l, a)
		}
		m.roots = append(m.roots, Root{Agent: path.Clean(a), Local: filepath.Clean(l)})
	}
	sort.Slice(m.roots, func(i, j int) bool {
		if len(m.roots[i].Agent) != len(m.roots[j].Agent) {
			return len(m.roots[i].Agent) > len(m.roots[j].Agent)
		}
		return m.roots[i].Agent < m.roots[j].Agent
	})
	return m, nil
}

// Roots are the mapped roots, longest agent root first.
func (m *Map) Roots() []Root {
	if m == nil {
		return nil
	}
	return append([]Root(nil), m.roots...)
}

// under returns the rest of p below root ("" for root itself) and whether
// p lies under it; sep is the path separator.
func under(p, root string, sep byte) (string, bool) {
	if p == root {
		return "", true
	}
	if root == string(sep) {
		return p[1:], true
	}
	if strings.HasPrefix(p, root) && p[len(root)] == sep {
		return p[len(root)+1:], true
	}
	return "", false
}

// ToLocal translates a path of the agent's to the user's machine. It must
// be absolute; ".." is resolved first, and a path that then lies under no
// root, or whose local file leads out of its root through a symlink, is
// refused.
func (m *Map) ToLocal(p string) (string, error) {
	if m == nil {
		return p, nil
	}
	if !path.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	clean := path.Clean(p)
	for _, r := range m.roots {
		rest, ok := under(clean, r.Agent, '/')
		if !ok {
			continue
		}
		local := filepath.Join(r.Local, filepath.FromSlash(rest))
		if err := inside(local, r.Local); err != nil {
			return "", fmt.Errorf("path %s: %w", p, err)
		}
		return local, nil
	}
	return "", fmt.Errorf("path %s is %w (%s)", p, ErrOutside, m.agentRoots())
}

// ToAgent translates a path of the user's machine to the agent's. It must
// be absolute; a path under no local root (symlinks resolved when it is
// not under one as written) is refused.
func (m *Map) ToAgent(p string) (string, error) {
	if m == nil {
		return p, nil
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("path %q is not absolute", p)
	}
	clean := filepath.Clean(p)
	if a, ok := m.toAgent(clean, false); ok {
		return a, nil
	}
	if real, err := resolve(clean); err == nil && real != clean {
		if a, ok := m.toAgent(real, true); ok {
			return a, nil
		}
	}
	return "", fmt.Errorf("path %s is %w (%s)", p, ErrOutside, m.localRoots())
}

func (m *Map) toAgent(p string, resolved bool) (string, bool) {
	best, agent, rest := -1, "", ""
	for _, r := range m.roots {
		root := r.Local
		if resolved {
			if rr, err := resolve(root); err == nil {
				root = rr
			}
		}
		if tail, ok := under(p, root, filepath.Separator); ok && len(root) > best {
			best, agent, rest = len(root), r.Agent, tail
		}
	}
	if best < 0 {
		return "", false
	}
	return path.Join(agent, filepath.ToSlash(rest)), true
}

// URIToLocal translates a file:// URI of the agent's; other URIs are
// returned as they are.
func (m *Map) URIToLocal(uri string) (string, error) {
	return m.uri(uri, m.ToLocal)
}

// URIToAgent translates a file:// URI of the user's machine; other URIs
// are returned as they are.
func (m *Map) URIToAgent(uri string) (string, error) {
	return m.uri(uri, m.ToAgent)
}

func (m *Map) uri(uri string, f func(string) (string, error)) (string, error) {
	if m == nil || !strings.HasPrefix(uri, "file:") {
		return uri, nil
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("uri %q: %w", uri, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("uri %s names another host", uri)
	}
	p, err := f(u.Path)
	if err != nil {
		return "", err
	}
	out := url.URL{Scheme: "file", Path: filepath.ToSlash(p), RawQuery: u.RawQuery, Fragment: u.Fragment}
	return out.String(), nil
}

func (m *Map) agentRoots() string {
	var s []string
	for _, r := range m.roots {
		s = append(s, r.Agent)
	}
	return "mapped: " + strings.Join(s, ", ")
}

func (m *Map) localRoots() string {
	var s []string
	for _, r := range m.roots {
		s = append(s, r.Local)
	}
	return "mapped: " + strings.Join(s, ", ")
}

// inside checks that local, its symlinks resolved as far as it exists,
// stays under root (its symlinks resolved too): a link inside the
// workspace pointing out of it leads the agent's path, on this machine, to
// a file that is not the one it names in its own filesystem.
func inside(local, root string) error {
	rr, err := resolve(root)
	if err != nil {
		return fmt.Errorf("the mapped root %s: %w", root, err)
	}
	real, err := resolve(local)
	if err != nil {
		return err
	}
	if _, ok := under(real, rr, filepath.Separator); !ok {
		return fmt.Errorf("it leads out of the mapped root %s through a symlink (to %s): refused", root, real)
	}
	return nil
}

// resolve resolves the symlinks of p's longest existing prefix and
// appends the rest; a dangling symlink is followed to where it points.
func resolve(p string) (string, error) {
	return resolveDepth(p, 0)
}

func resolveDepth(p string, depth int) (string, error) {
	if depth > 40 {
		return "", fmt.Errorf("%s: too many levels of symbolic links", p)
	}
	rest := ""
	cur := p
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			// Dangling: where it points does not exist (yet).
			target, err := os.Readlink(cur)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(cur), target)
			}
			return resolveDepth(filepath.Join(target, rest), depth+1)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
