package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// maxNotes bounds the lines Explain returns.
const maxNotes = 8

// Blocked starts every line Explain returns.
const Blocked = "blocked by the sandbox: "

// Error messages, lower-cased, as shells, coreutils, Go, Python, Node,
// curl, git and ssh print them.
var (
	// A file the sandbox shows read-only is also a mount point: replacing
	// it (git's config.lock renamed over config) is "busy".
	roErrors = []string{"read-only file system", "erofs", "device or resource busy", "ebusy"}
	// A hidden file reads as missing, or (a file masked by /dev/null) as
	// not permitted.
	enoentErrors = []string{"no such file or directory", "enoent", "cannot open", "can't open", "permission denied", "eacces"}
	deniedErrors = []string{"permission denied", "eacces"}
	netErrors    = []string{
		"network is unreachable", "enetunreach", "temporary failure in name resolution",
		"eai_again", "could not resolve host", "could not resolve hostname", "unable to resolve host",
	}
	refusedErrors = []string{"connection refused", "econnrefused", "couldn't connect to server", "failed to connect to"}
)

var (
	quoted   = regexp.MustCompile("'([^']+)'|\"([^\"]+)\"|‘([^’]+)’|`([^`']+)'")
	procRoot = regexp.MustCompile(`^/proc/(?:self|thread-self|[0-9]+)/root(/.*)?$`)
	loopback = regexp.MustCompile(`(?i)\b(127\.[0-9]+\.[0-9]+\.[0-9]+|localhost|\[?::1\]?)(?:[:/ ]+(?:port )?([0-9]{1,5}))?`)
	hostName = regexp.MustCompile(`(?i)(?:resolve host(?:name)?:?|resolve host address|getaddrinfo eai_again|lookup|host address ')\s*'?([a-z0-9][a-z0-9.-]*[a-z0-9])`)
)

// Explain returns a line for each operation the sandbox denied that
// output (the command's text, escape sequences stripped) shows, such as
// "blocked by the sandbox: write to ~/.bashrc (a shell start file,
// read-only)". It reads the usual error messages and reports only what the
// policy accounts for: a failed write where the sandbox made the place
// read-only, a missing file the sandbox hides (and the host has), a failed
// connection while the network is off.
func (r *Run) Explain(output string) []string {
	var notes []string
	seen := map[string]bool{}
	more := 0
	note := func(s string) {
		if seen[s] {
			return
		}
		seen[s] = true
		if len(notes) == maxNotes {
			more++
			return
		}
		notes = append(notes, s)
	}
	low := asciiLower(output) // same offsets as output
	for _, start := range errorLines(low, r.network) {
		end := strings.IndexByte(low[start:], '\n')
		if end < 0 {
			end = len(low) - start
		}
		end = start + min(end, 4096)
		line, low := output[start:end], low[start:end]
		switch {
		case containsAny(low, roErrors):
			if n, _, ok := r.explainPath(line, low, roErrors, func(_ string, p place) bool { return p.acc&readWrite == 0 }); ok {
				note(Blocked + "write to " + n)
			}
		case containsAny(low, enoentErrors):
			if n, pl, ok := r.explainPath(line, low, enoentErrors, func(target string, p place) bool {
				return p.acc&hides != 0 && hiddenThere(target, p) // else simply missing
			}); ok {
				verb := "read "
				if containsAny(low, deniedErrors) || pl.acc == hidden {
					verb = "access to " // a masked file, an empty read-only directory: read or write
				}
				note(Blocked + verb + n)
			}
		case !r.network && containsAny(low, netErrors):
			what := "network access"
			if m := hostName.FindStringSubmatch(line); m != nil && !strings.Contains(m[1], "/") {
				what += " to " + m[1]
			}
			note(Blocked + what + " (the network is off)")
		case !r.network && containsAny(low, refusedErrors):
			if m := loopback.FindStringSubmatch(line); m != nil {
				addr := strings.Trim(m[1], "[]")
				if m[2] != "" {
					addr += ":" + m[2]
				}
				note(Blocked + "connect to " + addr + " (the network is off: the sandbox's loopback is its own)")
			}
		}
	}
	if more > 0 {
		notes = append(notes, fmt.Sprintf("%s%d more", Blocked, more))
	}
	return notes
}

// maxErrorLines bounds the lines of one output Explain looks at.
const maxErrorLines = 1000

// errorLines returns the offsets of the lines of low (lower-cased output)
// that hold an error message Explain knows, in order.
func errorLines(low string, network bool) []int {
	lists := [][]string{roErrors, enoentErrors}
	if !network {
		lists = append(lists, netErrors, refusedErrors)
	}
	seen := map[int]bool{}
	var out []int
	for _, list := range lists {
		for _, e := range list {
			for i := 0; len(out) < maxErrorLines; {
				j := strings.Index(low[i:], e)
				if j < 0 {
					break
				}
				start := strings.LastIndexByte(low[:i+j], '\n') + 1
				if !seen[start] {
					seen[start] = true
					out = append(out, start)
				}
				next := strings.IndexByte(low[i+j:], '\n')
				if next < 0 {
					break
				}
				i += j + next + 1
			}
		}
	}
	sort.Ints(out)
	return out
}

// asciiLower lower-cases the ASCII letters of s only, so that offsets in
// the result are offsets in s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// explainPath finds the path an error line is about and says what the
// sandbox made of it ("~/.bashrc (a shell start file, read-only)"), if
// denied says it was the sandbox's doing.
func (r *Run) explainPath(line, low string, errs []string, denied func(target string, p place) bool) (string, place, bool) {
	for _, c := range candidates(line, low, errs) {
		abs := r.abs(c)
		if abs == "" {
			continue
		}
		target := resolve(abs)
		pl := r.classify(target)
		if !denied(target, pl) {
			continue
		}
		shown := r.show(abs)
		if target != abs && r.show(target) != shown {
			shown += ", which leads to " + r.show(target)
		}
		return fmt.Sprintf("%s (%s)", shown, pl.why), pl, true
	}
	return "", place{}, false
}

// hiddenThere reports whether target, missing in the sandbox, is there
// outside it: the file itself or, under an empty read-only directory
// (nothing can be created in it), the directory a new file would go in.
func hiddenThere(target string, pl place) bool {
	if _, err := os.Lstat(target); err == nil {
		return true
	}
	dir := filepath.Dir(target)
	if pl.acc != hidden || dir == pl.at || !under(dir, pl.at) {
		return false
	}
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// candidates are the words of line that may be the path it is about, the
// likeliest first: quoted ones, the word just before the error, then any
// word that looks like a path.
func candidates(line, low string, errs []string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(line, -1) {
		for _, g := range m[1:] {
			if g != "" {
				out = append(out, g)
			}
		}
	}
	for _, e := range errs {
		if i := strings.Index(low, e); i > 0 {
			before := strings.TrimRight(line[:i], " :,([")
			if j := strings.LastIndex(before, ": "); j >= 0 {
				before = before[j+2:]
			}
			f := strings.Fields(before)
			if len(f) > 0 {
				out = append(out, strings.Trim(f[len(f)-1], "'\"`‘’,;()[]"))
			}
			break
		}
	}
	// The program that prints the error ("/usr/bin/bash: line 1: ...") is
	// not what it is about.
	prog, _, _ := strings.Cut(line, ": ")
	for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '\'' || r == '"' || r == '`' }) {
		f = strings.Trim(f, ":,;()[]‘’")
		if strings.ContainsAny(f, "/~") && f != prog {
			out = append(out, f)
		}
	}
	return out
}

// abs is the absolute path a command means by p, seen from its working
// directory ("" when p cannot be a path).
func (r *Run) abs(p string) string {
	if p == "" || strings.ContainsAny(p, "\x00\n") || strings.Contains(p, "://") {
		return ""
	}
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if r.home == "" {
			return ""
		}
		p = r.home + p[1:]
	case !filepath.IsAbs(p):
		p = r.dir + "/" + p
	}
	p = filepath.Clean(p)
	// The sandbox's /proc/self/root is the sandbox's own root.
	if m := procRoot.FindStringSubmatch(p); m != nil {
		p = "/" + strings.TrimPrefix(m[1], "/")
	}
	return p
}

// resolve follows the symlinks of p as far as it exists on the host.
func resolve(p string) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if r, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Clean(r + rest)
		}
		if q == "/" || q == "." {
			return p
		}
		rest = "/" + filepath.Base(q) + rest
	}
}

// show is how a path reads in a note: relative to the workspace root
// holding it, else ~/... under $HOME, else absolute.
func (r *Run) show(p string) string {
	for _, root := range r.roots {
		if p != root && under(p, root) {
			return strings.TrimPrefix(p, root+"/")
		}
	}
	if r.home != "" && under(p, r.home) {
		return "~" + strings.TrimPrefix(p, r.home)
	}
	return p
}
