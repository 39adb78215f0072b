package registry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Defaults of Installer.
const (
	DefaultMaxDownload = 1 << 30 // bytes of one archive
	DefaultMaxUnpacked = 2 << 30 // bytes unpacked from one archive
	DefaultMaxEntries  = 100_000 // files, dirs and links in one archive
	DefaultStall       = time.Minute
)

// Install phases reported through Progress.
const (
	PhaseDownload = "download" // Bytes of Total (-1 when the server does not say)
	PhaseVerify   = "verify"
	PhaseUnpack   = "unpack" // Bytes unpacked so far
	PhasePrefetch = "prefetch"
	PhaseDone     = "done"
)

// Progress is one report of an install's progress.
type Progress struct {
	Phase string
	Bytes int64
	Total int64 // -1 when unknown
}

// ErrNotInstalled is returned for a binary agent with no install on disk.
var ErrNotInstalled = errors.New("not installed")

// ErrChecksum is returned when a download does not match the registry's sha256.
var ErrChecksum = errors.New("checksum mismatch")

// Installer installs and resolves registry agents. Binary agents are
// unpacked under Dir/agents/<id>/<version>/; every install, of any kind,
// leaves a record there (recordFile) naming the command that starts it.
type Installer struct {
	Dir      string       // data directory (e.g. stdpath("data")/acp)
	Client   *http.Client // http.DefaultClient when nil
	Platform string       // registry platform key; this machine's when empty
	// LookPath finds launchers (npx, uvx); exec.LookPath when nil.
	LookPath func(string) (string, error)

	MaxDownload int64         // DefaultMaxDownload when 0
	MaxUnpacked int64         // DefaultMaxUnpacked when 0
	MaxEntries  int           // DefaultMaxEntries when 0
	Stall       time.Duration // a download with no byte for this long fails; DefaultStall when 0
}

// Command is how to start an agent, as resolved or installed.
type Command struct {
	ID      string            `json:"id"`
	Version string            `json:"version"`
	Kind    string            `json:"kind"`
	Cmd     []string          `json:"cmd"` // program then arguments
	Env     map[string]string `json:"env,omitempty"`
	// Dir is the install directory (binary and prefetched packages).
	Dir string `json:"dir,omitempty"`
	// Installed is true when this command comes from an install on disk.
	Installed   bool      `json:"-"`
	InstalledAt time.Time `json:"installed_at,omitempty"`
	Archive     string    `json:"archive,omitempty"` // URL downloaded (binary)
	SHA256      string    `json:"sha256,omitempty"`  // of the archive downloaded (binary)
}

// recordFile is written last into an install directory.
const recordFile = ".nvim-acp-install.json"

func (in *Installer) platform() string {
	if in.Platform != "" {
		return in.Platform
	}
	return Platform(runtime.GOOS, runtime.GOARCH)
}

func (in *Installer) lookPath(name string) (string, error) {
	if in.LookPath != nil {
		return in.LookPath(name)
	}
	return exec.LookPath(name)
}

func (in *Installer) client() *http.Client {
	if in.Client != nil {
		return in.Client
	}
	return http.DefaultClient
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Launcher hints: what to install when npx or uvx is missing.
const (
	NpxHint = "npx not found: install Node.js (https://nodejs.org, or e.g. `apt install nodejs npm`, `brew install node`)"
	UvxHint = "uvx not found: install uv (https://docs.astral.sh/uv/getting-started/installation/, e.g. `curl -LsSf https://astral.sh/uv/install.sh | sh` or `brew install uv`)"
)

// Usable says which of a's kinds can be installed here, in order of
// preference, and for each kind that cannot, why.
func (in *Installer) Usable(a Agent) (kinds []string, why []string) {
	for _, k := range a.Kinds() {
		if err := in.usable(a, k); err != nil {
			why = append(why, err.Error())
			continue
		}
		kinds = append(kinds, k)
	}
	return kinds, why
}

func (in *Installer) usable(a Agent, kind string) error {
	switch kind {
	case KindBinary:
		if len(a.Distribution.Binary) == 0 {
			return fmt.Errorf("no binary distribution")
		}
		p := in.platform()
		if _, ok := a.Distribution.Binary[p]; !ok || p == "" {
			if p == "" {
				p = runtime.GOOS + "/" + runtime.GOARCH
			}
			return fmt.Errorf("no binary for %s (built for %s)", p, strings.Join(sortedKeys(a.Distribution.Binary), ", "))
		}
	case KindNpx:
		if a.Distribution.Npx == nil {
			return fmt.Errorf("no npx distribution")
		}
		if _, err := in.lookPath("npx"); err != nil {
			return errors.New(NpxHint)
		}
	case KindUvx:
		if a.Distribution.Uvx == nil {
			return fmt.Errorf("no uvx distribution")
		}
		if _, err := in.lookPath("uvx"); err != nil {
			return errors.New(UvxHint)
		}
	default:
		return fmt.Errorf("unknown distribution kind %q", kind)
	}
	return nil
}

// pick returns the kind to install: the one asked for, else the first usable.
func (in *Installer) pick(a Agent, kind string) (string, error) {
	if kind != "" {
		if err := in.usable(a, kind); err != nil {
			return "", fmt.Errorf("%s: %w", a.ID, err)
		}
		return kind, nil
	}
	kinds, why := in.Usable(a)
	if len(kinds) == 0 {
		return "", fmt.Errorf("%s cannot be installed here: %s", a.ID, strings.Join(why, "; "))
	}
	return kinds[0], nil
}

// PackageCommand returns the command that runs a's npx or uvx
// distribution, version pinned: `npx -y <package>@<version> args...` or
// `uvx <package>==<version> args...` (the registry's own package spec when
// it carries a version already, as it normally does).
func PackageCommand(a Agent, kind string) (Command, error) {
	var p *Package
	switch kind {
	case KindNpx:
		p = a.Distribution.Npx
	case KindUvx:
		p = a.Distribution.Uvx
	}
	if p == nil {
		return Command{}, fmt.Errorf("%s has no %s distribution", a.ID, kind)
	}
	if p.Cmd != "" {
		if err := programName(p.Cmd); err != nil {
			return Command{}, fmt.Errorf("%s: %s cmd %w", a.ID, kind, err)
		}
	}
	if strings.HasPrefix(p.Package, "-") {
		return Command{}, fmt.Errorf("%s: %s package %q looks like an option", a.ID, kind, p.Package)
	}
	var cmd []string
	spec := packageSpec(a, kind)
	if kind == KindNpx {
		if p.Cmd != "" {
			cmd = []string{"npx", "-y", "--package=" + spec, "--", p.Cmd}
		} else {
			cmd = []string{"npx", "-y", spec}
		}
	} else {
		if p.Cmd != "" {
			cmd = []string{"uvx", "--from", spec, p.Cmd}
		} else {
			cmd = []string{"uvx", spec}
		}
	}
	return Command{ID: a.ID, Version: a.Version, Kind: kind, Cmd: append(cmd, p.Args...), Env: copyEnv(p.Env)}, nil
}

// packageSpec returns the version-pinned package of a's npx or uvx
// distribution.
func packageSpec(a Agent, kind string) string {
	if kind == KindNpx {
		spec := a.Distribution.Npx.Package
		if !npmPinned(spec) {
			spec += "@" + a.Version
		}
		return spec
	}
	spec := a.Distribution.Uvx.Package
	if !pypiPinned(spec) {
		spec += "==" + a.Version
	}
	return spec
}

// npmPinned says whether an npm package spec names a version
// ("@scope/name@1.2.3", "name@1.2.3").
func npmPinned(spec string) bool {
	name := spec
	if strings.HasPrefix(name, "@") {
		i := strings.Index(name, "/")
		if i < 0 {
			return false
		}
		name = name[i+1:]
	}
	return strings.Contains(name, "@")
}

// pypiPinned says whether a PyPI requirement carries a version or source
// ("pkg==1.2.3", "pkg[extra]>=1", "pkg@1.2.3", "pkg @ https://...").
func pypiPinned(spec string) bool {
	return strings.ContainsAny(spec, "=<>!~@")
}

func copyEnv(env map[string]string) map[string]string {
	if len(env) == 0 {
		return nil
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// Resolve returns the command that starts a without installing anything:
// its newest install on disk when there is one for a.Version (or, failing
// that, any version), else the npx/uvx command (which downloads the
// package on first start). A binary agent never installed gives
// ErrNotInstalled.
func (in *Installer) Resolve(a Agent) (Command, error) {
	installed, err := in.Installed(a.ID)
	if err != nil {
		return Command{}, err
	}
	for _, c := range installed {
		if c.Version == a.Version {
			return c, nil
		}
	}
	for _, k := range a.Kinds() {
		if k == KindBinary || in.usable(a, k) != nil {
			continue
		}
		return PackageCommand(a, k)
	}
	if len(installed) > 0 {
		return installed[0], nil
	}
	kinds, why := in.Usable(a)
	if len(kinds) > 0 {
		return Command{}, fmt.Errorf("%s: %w (install it first)", a.ID, ErrNotInstalled)
	}
	return Command{}, fmt.Errorf("%s: %w and cannot be installed here: %s", a.ID, ErrNotInstalled, strings.Join(why, "; "))
}

// Installed lists the installs of agent id on disk, newest version first.
// Installs whose command has gone missing are left out.
func (in *Installer) Installed(id string) ([]Command, error) {
	if !idPattern.MatchString(id) {
		return nil, fmt.Errorf("agent id %q is not a registry id", id)
	}
	dir := filepath.Join(in.Dir, "agents", id)
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("installed %s: %w", id, err)
	}
	var out []Command
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		c, err := readRecord(filepath.Join(dir, e.Name()))
		if err != nil || c.ID != id || c.Version != e.Name() || len(c.Cmd) == 0 {
			continue
		}
		if c.Kind == KindBinary {
			if fi, err := os.Stat(c.Cmd[0]); err != nil || !fi.Mode().IsRegular() {
				continue
			}
		}
		c.Installed = true
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return compareVersions(out[i].Version, out[j].Version) > 0 })
	return out, nil
}

func readRecord(dir string) (Command, error) {
	var c Command
	b, err := os.ReadFile(filepath.Join(dir, recordFile))
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(b, &c)
	return c, err
}

// compareVersions orders semantic versions by their numeric parts, then a
// release above its pre-releases, then the rest as text.
func compareVersions(a, b string) int {
	ac, apre, _ := strings.Cut(a, "-")
	bc, bpre, _ := strings.Cut(b, "-")
	ap, bp := strings.Split(ac, "."), strings.Split(bc, ".")
	for i := 0; i < len(ap) || i < len(bp); i++ {
		var x, y int
		if i < len(ap) {
			x, _ = strconv.Atoi(ap[i])
		}
		if i < len(bp) {
			y, _ = strconv.Atoi(bp[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case apre == bpre:
		return strings.Compare(a, b)
	case apre == "":
		return 1
	case bpre == "":
		return -1
	}
	return strings.Compare(apre, bpre)
}

// InstallOptions tune one Install.
type InstallOptions struct {
	Kind     string         // distribution kind; the first usable one when empty
	Progress func(Progress) // called from Install's goroutine; may be nil
}

// Install makes a runnable and returns the command that starts it.
//
//   - binary: downloads the archive of this platform, verifies it (sha256
//     when the registry gives one; always the size the server announced and
//     the archive's format), unpacks it safely into a temporary directory and
//     renames that to Dir/agents/<id>/<version>;
//   - npx: checks npx is there and has npm fetch the pinned package into its
//     cache (`npx -y --package=<spec> -- node --version`), so the first
//     start does not wait for the download;
//   - uvx: checks uvx is there (uv fetches the package on first start).
//
// A cancelled ctx stops the install and leaves nothing behind.
func (in *Installer) Install(ctx context.Context, a Agent, opts InstallOptions) (Command, error) {
	if err := a.Validate(); err != nil {
		return Command{}, err
	}
	if in.Dir == "" {
		return Command{}, errors.New("install: no data directory")
	}
	kind, err := in.pick(a, opts.Kind)
	if err != nil {
		return Command{}, err
	}
	report := opts.Progress
	if report == nil {
		report = func(Progress) {}
	}
	var c Command
	switch kind {
	case KindBinary:
		c, err = in.installBinary(ctx, a, report)
	default:
		c, err = in.installPackage(ctx, a, kind, report)
	}
	if err != nil {
		// A failed first install leaves no empty folder behind (os.Remove
		// takes only empty directories).
		os.Remove(filepath.Join(in.Dir, "agents", a.ID))
		return Command{}, err
	}
	report(Progress{Phase: PhaseDone, Total: -1})
	return c, nil
}

// agentDir returns Dir/agents/<id>, created.
func (in *Installer) agentDir(a Agent) (string, error) {
	dir := filepath.Join(in.Dir, "agents", a.ID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install %s: %w", a.ID, err)
	}
	removeStale(dir)
	return dir, nil
}

// staleAfter is when a leftover temporary install directory (a crash, a
// killed host) is removed by the next install of the same agent.
const staleAfter = 24 * time.Hour

func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".install-") {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// commit writes c's record into staged, then renames staged to
// dir/<version>, replacing an earlier install of that version.
func commit(dir, staged string, c Command) error {
	c.Installed = false
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	rec := filepath.Join(staged, recordFile)
	os.Remove(rec) // an archive's file of that name is not ours
	if err := os.WriteFile(rec, b, 0o644); err != nil {
		return fmt.Errorf("install %s: %w", c.ID, err)
	}
	final := filepath.Join(dir, c.Version)
	if _, err := os.Lstat(final); err == nil {
		old, err := os.MkdirTemp(dir, ".install-old-")
		if err != nil {
			return fmt.Errorf("install %s: %w", c.ID, err)
		}
		defer os.RemoveAll(old)
		if err := os.Rename(final, filepath.Join(old, "v")); err != nil {
			return fmt.Errorf("install %s: replace %s: %w", c.ID, final, err)
		}
	}
	if err := os.Rename(staged, final); err != nil {
		return fmt.Errorf("install %s: %w", c.ID, err)
	}
	return nil
}

func (in *Installer) installPackage(ctx context.Context, a Agent, kind string, report func(Progress)) (Command, error) {
	c, err := PackageCommand(a, kind)
	if err != nil {
		return Command{}, err
	}
	if kind == KindNpx {
		report(Progress{Phase: PhasePrefetch, Total: -1})
		spec := "--package=" + packageSpec(a, kind)
		if err := in.prefetch(ctx, a, "npx", "-y", spec, "--", "node", "--version"); err != nil {
			return Command{}, err
		}
	}
	dir, err := in.agentDir(a)
	if err != nil {
		return Command{}, err
	}
	staged, err := os.MkdirTemp(dir, ".install-")
	if err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	defer os.RemoveAll(staged)
	c.Dir = filepath.Join(dir, a.Version)
	c.InstalledAt = time.Now().UTC()
	if err := commit(dir, staged, c); err != nil {
		return Command{}, err
	}
	c.Installed = true
	return c, nil
}

// prefetch runs a launcher so it fetches the package now; its output tail
// explains a failure.
func (in *Installer) prefetch(ctx context.Context, a Agent, name string, args ...string) error {
	bin, err := in.lookPath(name)
	if err != nil {
		return errors.New(NpxHint)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var out tailBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("install %s: %w", a.ID, ctx.Err())
		}
		return fmt.Errorf("install %s: %s %s: %v: %s", a.ID, name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// tailBuffer keeps the last 2 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	const max = 2048
	t.b = append(t.b, p...)
	if len(t.b) > max {
		t.b = append(t.b[:0], t.b[len(t.b)-max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

func (in *Installer) installBinary(ctx context.Context, a Agent, report func(Progress)) (Command, error) {
	plat := in.platform()
	t := a.Distribution.Binary[plat]
	u, err := url.Parse(t.Archive)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return Command{}, fmt.Errorf("install %s: archive %q is not an http(s) URL", a.ID, t.Archive)
	}
	// Trusted to https, or to the checksum the registry gives: a plain
	// http archive could be anything by the time it arrives.
	if u.Scheme != "https" && t.SHA256 == "" {
		return Command{}, fmt.Errorf("install %s: archive %s is not https and the registry gives no sha256 to verify it: refused", a.ID, t.Archive)
	}
	rel, err := cleanRel(t.Cmd)
	if err == nil && rel == "" {
		err = errors.New("names no file")
	}
	if err != nil {
		return Command{}, fmt.Errorf("install %s: cmd %q: %w", a.ID, t.Cmd, err)
	}
	dir, err := in.agentDir(a)
	if err != nil {
		return Command{}, err
	}
	tmp, err := os.MkdirTemp(dir, ".install-")
	if err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	defer os.RemoveAll(tmp)

	archive := filepath.Join(tmp, "archive")
	sum, err := in.download(ctx, t.Archive, archive, t.SHA256 == "", report)
	if err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	report(Progress{Phase: PhaseVerify, Total: -1})
	if t.SHA256 != "" && !strings.EqualFold(sum, t.SHA256) {
		return Command{}, fmt.Errorf("install %s: %w: %s has sha256 %s, the registry says %s", a.ID, ErrChecksum, t.Archive, sum, strings.ToLower(t.SHA256))
	}
	format, err := archiveFormat(u.Path, archive)
	if err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	lim := &limits{
		maxBytes:   orDefault(in.MaxUnpacked, DefaultMaxUnpacked),
		maxEntries: orDefault(in.MaxEntries, DefaultMaxEntries),
		report:     func(n int64) { report(Progress{Phase: PhaseUnpack, Bytes: n, Total: -1}) },
	}
	if err := unpack(ctx, format, archive, root, rel, lim); err != nil {
		return Command{}, fmt.Errorf("install %s: unpack %s: %w", a.ID, t.Archive, err)
	}
	if err := checkLinks(root); err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	exe, err := findCmd(root, rel)
	if err != nil {
		return Command{}, fmt.Errorf("install %s: %w", a.ID, err)
	}
	final := filepath.Join(dir, a.Version)
	c := Command{
		ID: a.ID, Version: a.Version, Kind: KindBinary,
		Cmd: append([]string{filepath.Join(final, filepath.FromSlash(exe))}, t.Args...),
		Env: copyEnv(t.Env),
		Dir: final, InstalledAt: time.Now().UTC(), Archive: t.Archive, SHA256: sum,
	}
	if err := commit(dir, root, c); err != nil {
		return Command{}, err
	}
	c.Installed = true
	return c, nil
}

// download saves url to dst and returns its sha256, reporting progress. It
// fails on a non-200 answer, more than MaxDownload bytes, a body shorter
// than the announced length, or no byte for Stall; with httpsOnly, when
// the answer came from anything but https (a redirect to http).
func (in *Installer) download(ctx context.Context, src, dst string, httpsOnly bool, report func(Progress)) (string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := orDefault(in.Stall, DefaultStall)
	watchdog := time.AfterFunc(stall, func() { cancel(fmt.Errorf("download %s: no data for %s", src, stall)) })
	defer watchdog.Stop()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", src, err)
	}
	req.Header.Set("User-Agent", UserAgent)
	resp, err := in.client().Do(req)
	if err != nil {
		if c := context.Cause(ctx); c != nil && c != ctx.Err() {
			return "", c
		}
		return "", fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if httpsOnly && resp.Request.URL.Scheme != "https" {
		return "", fmt.Errorf("download %s: redirected to %s, which is not https, and there is no sha256 to verify it: refused", src, resp.Request.URL)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("download %s: %s", src, resp.Status)
	}
	limit := orDefault(in.MaxDownload, DefaultMaxDownload)
	total := resp.ContentLength
	if total > limit {
		return "", fmt.Errorf("download %s: %d bytes is over the %d byte limit", src, total, limit)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("download %s: %w", src, err)
	}
	defer f.Close()
	h := sha256.New()
	w := &progressWriter{w: io.MultiWriter(f, h), total: total, report: func(n int64) {
		watchdog.Reset(stall)
		report(Progress{Phase: PhaseDownload, Bytes: n, Total: total})
	}}
	report(Progress{Phase: PhaseDownload, Total: total})
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if c := context.Cause(ctx); c != nil && c != ctx.Err() {
			return "", c
		}
		return "", fmt.Errorf("download %s: %w", src, err)
	}
	w.flush()
	if n > limit {
		return "", fmt.Errorf("download %s: over the %d byte limit", src, limit)
	}
	if total >= 0 && n != total {
		return "", fmt.Errorf("download %s: got %d bytes of %d", src, n, total)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("download %s: %w", src, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// progressWriter counts bytes and reports every 1% (or every 256 KiB when
// the total is unknown), so a large download makes about a hundred reports.
type progressWriter struct {
	w      io.Writer
	n      int64
	last   int64
	total  int64
	report func(n int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	step := int64(256 << 10)
	if p.total > 0 {
		step = max(p.total/100, 1)
	}
	if p.n-p.last >= step {
		p.flush()
	}
	return n, err
}

func (p *progressWriter) flush() {
	if p.n != p.last {
		p.last = p.n
		p.report(p.n)
	}
}

// Archive formats.
const (
	formatZip    = "zip"
	formatTarGz  = "tar.gz"
	formatTarBz2 = "tar.bz2"
	formatTar    = "tar"
	formatRaw    = "raw"
)

// archiveFormat tells the format from the URL's name and checks the file's
// first bytes agree; a name with no archive suffix is sniffed, and anything
// that is no archive is a raw executable.
func archiveFormat(urlPath, file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	sniffed := formatRaw
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		sniffed = formatTarGz
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		sniffed = formatZip
	case bytes.HasPrefix(head, []byte("BZh")):
		sniffed = formatTarBz2
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		sniffed = formatTar
	}
	name := strings.ToLower(path.Base(urlPath))
	want := ""
	switch {
	case strings.HasSuffix(name, ".zip"):
		want = formatZip
	case strings.HasSuffix(name, ".tar.gz"), strings.HasSuffix(name, ".tgz"):
		want = formatTarGz
	case strings.HasSuffix(name, ".tar.bz2"), strings.HasSuffix(name, ".tbz2"):
		want = formatTarBz2
	case strings.HasSuffix(name, ".tar"):
		want = formatTar
	}
	for _, ext := range []string{".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage"} {
		if strings.HasSuffix(name, ext) {
			return "", fmt.Errorf("%s: installer packages (%s) are not supported", name, ext)
		}
	}
	if n == 0 {
		return "", fmt.Errorf("%s: empty download", name)
	}
	if want != "" && want != sniffed {
		return "", fmt.Errorf("%s is not a %s archive (its first bytes say %s)", name, want, sniffed)
	}
	return sniffed, nil
}
