package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Git runs what its configuration and hooks name, outside any sandbox, on
// the user's next commit: a command may commit (the repository's git
// directory is writable and a mount point, so it cannot be renamed or
// replaced), but never change the hooks or the configuration. The
// directories of what is protected are mount points too: their names
// cannot be swapped for others from inside.

// maxModules bounds the submodule git directories looked at.
const maxModules = 200

// planGit protects the repository root is in (found upward, as git does).
// writable are the read-write roots; seen skips repositories planned for
// another root.
func planGit(root string, writable []string, readOnlyWorkspace bool, r *Run, b *planner, seen map[string]bool) {
	top := ""
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d + "/.git"); err == nil {
			top = d
			break
		}
		if d == "/" {
			return
		}
	}
	if r.home != "" && under(r.home, top) && !inRoots(top, writable) {
		// A repository of the home itself (dotfiles): showing it would show
		// the home, and git would take the hidden files for deleted ones.
		return
	}
	dotgit := top + "/.git"
	gitdir := real(dotgit)
	fi, err := os.Stat(dotgit)
	if err != nil || gitdir == "" {
		return
	}
	main := fi.IsDir()
	if !main {
		gitdir = gitdirOf(dotgit, top)
		if gitdir == "" {
			return
		}
	}
	if seen[gitdir] {
		return
	}
	seen[gitdir] = true
	common := gitdir
	if c, err := os.ReadFile(gitdir + "/commondir"); err == nil {
		p := strings.TrimSpace(string(c))
		if !filepath.IsAbs(p) {
			p = gitdir + "/" + p
		}
		if rc := real(p); rc != "" {
			common = rc
		}
	} else if main {
		r.gitdirs = append(r.gitdirs, gitdir)
	}

	inWritable := func(p string) bool {
		for _, w := range writable {
			if under(p, w) {
				return true
			}
		}
		return false
	}
	// A workspace inside a repository sees the rest of it read-only (git
	// would take hidden files for deleted ones), and its git directory
	// read-write.
	if !inWritable(top) && !readOnlyWorkspace {
		b.bind(top, readOnly, "the repository around the workspace, read-only", rankRead)
	}
	for _, d := range []string{gitdir, common} {
		if !readOnlyWorkspace {
			b.bind(d, readWrite, "the repository's git directory", rankWrite)
			writable = append(writable, d)
		}
	}
	wtConfig := worktreeConfig(common + "/config")
	protect := func(p, why string, mkdir bool) {
		if mkdir && inWritable(p) {
			if _, err := os.Lstat(p); os.IsNotExist(err) {
				_ = os.Mkdir(p, 0o755) // something to show read-only
			}
		}
		if !mkdir && wtConfig && filepath.Base(p) == "config.worktree" && inWritable(p) {
			// git reads it, and a command could create it: an empty one
			// (as git would make) to show read-only.
			if f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
				f.Close()
			}
		}
		// Only what the sandbox could write: a symlink leading elsewhere
		// leads where it is read-only or hidden already.
		if rp := real(p); rp != "" && inWritable(rp) {
			b.bind(rp, readOnly, why, rankProtect)
		}
	}
	protect(common+"/hooks", whyHooks, true)
	protect(common+"/config", whyGitConfig, false)
	protect(common+"/config.worktree", whyGitConfig, false)
	protect(gitdir+"/commondir", whyGitConfig, false) // a worktree's, or one there already: git follows it
	if gitdir != common {
		protect(gitdir+"/config.worktree", whyGitConfig, false)
		protect(gitdir+"/gitdir", whyGitConfig, false)
	}
	if hp := hooksPath(common + "/config"); hp != "" {
		switch {
		case strings.HasPrefix(hp, "~/") && r.home != "":
			hp = r.home + hp[1:]
		case !filepath.IsAbs(hp):
			hp = top + "/" + hp
		}
		protect(filepath.Clean(hp), whyHooks, true)
	}
	// Files the configuration includes are configuration: read-only when
	// they are in a writable place; one missing there, which a command
	// could create, is looked for after each command (Tampered).
	for _, inc := range configIncludes(common+"/config", r.home) {
		if _, err := os.Lstat(inc); err == nil {
			protect(inc, whyGitConfig, false)
		} else if inWritable(inc) {
			r.includes = append(r.includes, inc)
		}
	}
	// Submodules keep their git directories under modules/.
	n := 0
	_ = filepath.WalkDir(common+"/modules", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if n >= maxModules {
			return filepath.SkipAll
		}
		switch d.Name() {
		case "objects", "refs", "logs", "hooks", "info", "lfs":
			return filepath.SkipDir
		}
		if _, err := os.Stat(p + "/HEAD"); err == nil {
			n++
			protect(p+"/hooks", whyHooks, true)
			protect(p+"/config", whyGitConfig, false)
			if _, err := os.Stat(p + "/commondir"); os.IsNotExist(err) && !readOnlyWorkspace {
				r.gitdirs = append(r.gitdirs, real(p))
			}
		}
		return nil
	})
}

// inRoots reports whether p is in one of roots.
func inRoots(p string, roots []string) bool {
	for _, r := range roots {
		if under(p, r) {
			return true
		}
	}
	return false
}

// gitdirOf reads a .git file ("gitdir: <path>") of a linked worktree or a
// submodule.
func gitdirOf(dotgit, top string) string {
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	p, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	p = strings.TrimSpace(p)
	if !filepath.IsAbs(p) {
		p = top + "/" + p
	}
	return real(p)
}

// hooksPath returns core.hooksPath of a git config file ("" if unset). It
// reads the file itself, not what it includes.
func hooksPath(config string) string {
	return configValue(config, "core", "hookspath")
}

// worktreeConfig reports whether a git config file turns on
// extensions.worktreeConfig: git then reads config.worktree too.
func worktreeConfig(config string) bool {
	switch strings.ToLower(configValue(config, "extensions", "worktreeconfig")) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// configValue returns the value of section.key (both lower case) in a git
// config file ("" if unset), reading the file itself, not what it
// includes.
func configValue(config, section, key string) string {
	vs := configValues(config, func(s string) bool { return s == section }, key)
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1] // the last one wins, as in git
}

// configIncludes returns the files a git config file includes
// (include.path, includeIf.<condition>.path), absolute, whatever the
// condition: git reads them as its configuration.
func configIncludes(config, home string) []string {
	var out []string
	for _, p := range configValues(config, func(s string) bool {
		return s == "include" || strings.HasPrefix(s, "includeif ") || strings.HasPrefix(s, "includeif\"")
	}, "path") {
		switch {
		case p == "":
			continue
		case strings.HasPrefix(p, "~/"):
			if home == "" {
				continue
			}
			p = home + p[1:]
		case !filepath.IsAbs(p):
			p = filepath.Dir(config) + "/" + p
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// configValues returns every value of key (lower case) in the sections of
// a git config file whose lower-cased header section accepts, in order.
func configValues(config string, section func(string) bool, key string) []string {
	f, err := os.Open(config)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inSection := false
	var out []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			name := strings.ToLower(strings.TrimSpace(strings.Trim(line, "[]")))
			inSection = section(name)
			continue
		}
		if !inSection {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, `"`) {
			v = strings.TrimSpace(v[:i])
		}
		out = append(out, strings.Trim(v, `"`))
	}
	return out
}

// Tampered lists what the command did that redirects git where the
// sandbox does not protect it: a git directory given a commondir makes git
// take its configuration and hooks from the directory it names; a file
// the configuration includes, missing before, is configuration now.
func (r *Run) Tampered() []string {
	var out []string
	for _, inc := range r.includes {
		if _, err := os.Lstat(inc); err == nil {
			out = append(out, fmt.Sprintf("the command created %s, which git's configuration includes (what it sets, such as core.fsmonitor, runs with your next git command): check or remove it before running git", r.show(inc)))
		}
	}
	for _, g := range r.gitdirs {
		if b, err := os.ReadFile(g + "/commondir"); err == nil {
			out = append(out, fmt.Sprintf("the command created %s/commondir (git now reads its configuration and hooks from %q): remove it before running git",
				r.show(g), strings.TrimSpace(string(b))))
		}
	}
	return out
}
