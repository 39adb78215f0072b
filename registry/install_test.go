package registry

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/registry/registrytest"
)

// entry is one member of a test archive.
type entry = registrytest.Entry

var (
	agentScript  = registrytest.Script
	makeTarGz    = registrytest.TarGz
	makeZip      = registrytest.Zip
	agentArchive = registrytest.Agent
)

// fileServer serves named files and records nothing else.
type fileServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newFileServer(t *testing.T) *fileServer {
	fsrv := &fileServer{files: map[string][]byte{}}
	fsrv.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fsrv.mu.Lock()
		b, ok := fsrv.files[r.URL.Path]
		fsrv.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(fsrv.Close)
	return fsrv
}

func (f *fileServer) put(path string, b []byte) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[path] = b
	return f.URL + path
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// binaryAgent is an agent whose linux-x86_64 build is archiveURL.
func binaryAgent(id, version, archiveURL, sha, cmd string) Agent {
	return Agent{ID: id, Name: "Test " + id, Version: version, Description: "test agent",
		Distribution: Distribution{Binary: map[string]BinaryTarget{
			"linux-x86_64": {Archive: archiveURL, SHA256: sha, Cmd: cmd, Args: []string{"acp"}, Env: map[string]string{"AGENT_FLAG": "1"}},
		}}}
}

// testClient trusts the test servers (https, as the archives of a real
// registry are: plain http ones need a sha256).
func testClient() *http.Client {
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	return srv.Client()
}

func testInstaller(t *testing.T) *Installer {
	return &Installer{Dir: t.TempDir(), Platform: "linux-x86_64", Client: testClient(),
		LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
}

// run starts an installed command and returns its output.
func run(t *testing.T, c Command) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the test agent is a shell script")
	}
	out, err := exec.Command(c.Cmd[0], c.Cmd[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("run %v: %v: %s", c.Cmd, err, out)
	}
	return string(out)
}

// leftovers lists what an install left in the agent's directory.
func leftovers(t *testing.T, in *Installer, id string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(in.Dir, "agents", id))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// installMustFail serves entries as an archive of format ("tar.gz" or
// "zip") and checks that installing it fails saying want, leaving nothing.
func installMustFail(t *testing.T, in *Installer, format string, entries []entry, want string) {
	t.Helper()
	srv := newFileServer(t)
	data := makeTarGz(t, entries)
	if format == "zip" {
		data = makeZip(t, entries)
	}
	u := srv.put("/a."+format, data)
	_, err := in.Install(context.Background(), binaryAgent("test-agent", "1.0.0", u, "", "./test-agent"), InstallOptions{})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if names := leftovers(t, in, "test-agent"); len(names) != 0 {
		t.Fatalf("left behind %v", names)
	}
}

// Install end to end from a local server, tar.gz and zip: progress is
// reported, the checksum verified, the agent runs, its files keep their
// modes, and it shows as installed.
func TestInstallBinaryEndToEnd(t *testing.T) {
	for _, format := range []string{"tar.gz", "zip"} {
		t.Run(format, func(t *testing.T) {
			srv := newFileServer(t)
			var data []byte
			if format == "zip" {
				data = makeZip(t, agentArchive())
			} else {
				data = makeTarGz(t, agentArchive())
			}
			u := srv.put("/releases/v1.2.3/test-agent-linux-x64."+format, data)
			a := binaryAgent("test-agent", "1.2.3", u, sum(data), "./test-agent")
			in := testInstaller(t)

			var progress []Progress
			c, err := in.Install(context.Background(), a, InstallOptions{Progress: func(p Progress) { progress = append(progress, p) }})
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(in.Dir, "agents", "test-agent", "1.2.3")
			want := Command{ID: "test-agent", Version: "1.2.3", Kind: KindBinary, Cmd: []string{filepath.Join(dir, "test-agent"), "acp"},
				Env: map[string]string{"AGENT_FLAG": "1"}, Dir: dir, Installed: true, Archive: u, SHA256: sum(data), InstalledAt: c.InstalledAt}
			if !reflect.DeepEqual(c, want) {
				t.Fatalf("command\n%+v, want\n%+v", c, want)
			}
			if out := run(t, c); out != "hello from agent acp\n" {
				t.Fatalf("agent said %q", out)
			}

			// Progress: download from 0 to the whole size, then verify,
			// unpack and done.
			var phases []string
			var last Progress
			for _, p := range progress {
				if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
					phases = append(phases, p.Phase)
				}
				if p.Phase == PhaseDownload {
					if p.Total != int64(len(data)) || p.Bytes < last.Bytes {
						t.Fatalf("download progress %+v after %+v", p, last)
					}
					last = p
				}
			}
			if !reflect.DeepEqual(phases, []string{PhaseDownload, PhaseVerify, PhaseUnpack, PhaseDone}) || last.Bytes != int64(len(data)) {
				t.Fatalf("phases %v, last download %+v of %d bytes", phases, last, len(data))
			}

			// Modes kept: the script executable, the data file not.
			if fi, _ := os.Stat(filepath.Join(dir, "share", "notes.txt")); fi == nil || fi.Mode().Perm()&0o111 != 0 {
				t.Fatalf("notes.txt mode %v", fi)
			}
			if out := run(t, Command{Cmd: []string{filepath.Join(dir, "share", "agent-link"), "via", "link"}}); out != "hello from agent via link\n" {
				t.Fatalf("link said %q", out)
			}

			got, err := in.Installed("test-agent")
			if err != nil || len(got) != 1 || got[0].Version != "1.2.3" || !reflect.DeepEqual(got[0].Cmd, c.Cmd) || !got[0].Installed {
				t.Fatalf("Installed = %+v, %v", got, err)
			}
			if r, err := in.Resolve(a); err != nil || !reflect.DeepEqual(r.Cmd, c.Cmd) {
				t.Fatalf("Resolve = %+v, %v", r, err)
			}
			if names := leftovers(t, in, "test-agent"); !reflect.DeepEqual(names, []string{"1.2.3"}) {
				t.Fatalf("agent dir holds %v", names)
			}
		})
	}
}

// Reinstalling a version replaces it; a second version sits beside it and
// is the newest.
func TestInstallReplacesAndOrdersVersions(t *testing.T) {
	srv := newFileServer(t)
	in := testInstaller(t)
	v1 := makeTarGz(t, []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}, {Name: "old-only", Body: "x", Mode: 0o644}})
	u1 := srv.put("/v1.tar.gz", v1)
	if _, err := in.Install(context.Background(), binaryAgent("a", "1.9.0", u1, "", "./test-agent"), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	v1b := makeTarGz(t, []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}})
	u1b := srv.put("/v1b.tar.gz", v1b)
	if _, err := in.Install(context.Background(), binaryAgent("a", "1.9.0", u1b, "", "./test-agent"), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "agents", "a", "1.9.0", "old-only")); !os.IsNotExist(err) {
		t.Fatalf("the old install's file survived: %v", err)
	}
	if _, err := in.Install(context.Background(), binaryAgent("a", "1.10.0", u1b, "", "./test-agent"), InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := in.Installed("a")
	if len(got) != 2 || got[0].Version != "1.10.0" || got[1].Version != "1.9.0" {
		t.Fatalf("Installed = %+v", got)
	}
	if names := leftovers(t, in, "a"); !reflect.DeepEqual(names, []string{"1.10.0", "1.9.0"}) {
		t.Fatalf("agent dir holds %v", names)
	}
	// Resolve for a registry that moved to 2.0.0 while offline: the newest install.
	if r, err := in.Resolve(binaryAgent("a", "2.0.0", u1b, "", "./test-agent")); err != nil || r.Version != "1.10.0" {
		t.Fatalf("Resolve = %+v, %v", r, err)
	}
}

// A download whose sha256 differs from the registry's is refused and
// leaves nothing.
func TestInstallChecksumMismatch(t *testing.T) {
	srv := newFileServer(t)
	data := makeTarGz(t, agentArchive())
	u := srv.put("/a.tar.gz", data)
	in := testInstaller(t)
	a := binaryAgent("test-agent", "1.0.0", u, strings.Repeat("0", 64), "./test-agent")
	_, err := in.Install(context.Background(), a, InstallOptions{})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), sum(data)) {
		t.Fatalf("err = %v", err)
	}
	if names := leftovers(t, in, "test-agent"); len(names) != 0 {
		t.Fatalf("left behind %v", names)
	}
	if _, err := in.Resolve(a); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Resolve err = %v", err)
	}
}

// Archives that try to write outside the install directory are refused,
// tar and zip alike, and nothing lands outside.
func TestInstallRejectsEscapingArchives(t *testing.T) {
	ok := entry{Name: "test-agent", Body: agentScript, Mode: 0o755}
	tests := []struct {
		name    string
		entries []entry
		want    string
		zipToo  bool
	}{
		{"parent", []entry{ok, {Name: "../evil", Body: "x", Mode: 0o644}}, "leaves the directory", true},
		{"nested parent", []entry{ok, {Name: "a/../../evil", Body: "x", Mode: 0o644}}, "leaves the directory", true},
		{"absolute", []entry{ok, {Name: "/tmp/evil", Body: "x", Mode: 0o644}}, "absolute name", true},
		{"backslash parent", []entry{ok, {Name: `..\evil`, Body: "x", Mode: 0o644}}, "leaves the directory", true},
		{"drive letter", []entry{ok, {Name: `C:\evil`, Body: "x", Mode: 0o644}}, "absolute name", true},
		{"symlink out", []entry{ok, {Name: "link", Type: tar.TypeSymlink, Link: "../../.."}}, "points outside", true},
		{"symlink absolute", []entry{ok, {Name: "link", Type: tar.TypeSymlink, Link: "/etc"}}, "points outside", true},
		{"write through symlink", []entry{ok, {Name: "sub/", Type: tar.TypeDir, Mode: 0o755}, {Name: "link", Type: tar.TypeSymlink, Link: "sub"},
			{Name: "link/evil", Body: "x", Mode: 0o644}}, "goes through the symlink", true},
		{"symlink chain out", []entry{ok, {Name: "a", Type: tar.TypeSymlink, Link: "."}, {Name: "b", Type: tar.TypeSymlink, Link: "a/.."}}, "symlink b leads outside", true},
		{"hard link out", []entry{ok, {Name: "h", Type: tar.TypeLink, Link: "../../../etc/passwd"}}, "leaves the directory", false},
		{"hard link to nothing", []entry{ok, {Name: "h", Type: tar.TypeLink, Link: "missing"}}, "no such file earlier", false},
		{"replace link with file", []entry{ok, {Name: "l", Type: tar.TypeSymlink, Link: "test-agent"}, {Name: "l", Body: "x", Mode: 0o644}}, "twice", true},
	}
	for _, tt := range tests {
		formats := []string{"tar.gz"}
		if tt.zipToo {
			formats = append(formats, "zip")
		}
		for _, format := range formats {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				in := testInstaller(t)
				in.Dir = filepath.Join(t.TempDir(), "data")
				installMustFail(t, in, format, tt.entries, tt.want)
				// Nothing escaped next to the data directory either.
				outside, _ := os.ReadDir(filepath.Dir(in.Dir))
				for _, e := range outside {
					if e.Name() != "data" {
						t.Fatalf("%s written outside the data directory", e.Name())
					}
				}
			})
		}
	}
}

// The symlink chain a -> ".", b -> "a/.." passes the per-link check (b is
// lexically "."), but resolves to the parent: the final check catches it.
func TestCheckLinksCatchesChains(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	os.Mkdir(root, 0o755)
	x := &extractor{ctx: context.Background(), root: root, lim: &limits{maxBytes: 1 << 20, maxEntries: 10}, links: map[string]bool{}, files: map[string]bool{}}
	if err := x.symlink("a", "."); err != nil {
		t.Fatal(err)
	}
	if err := x.symlink("b", "a/.."); err != nil {
		t.Fatalf("b -> a/.. is lexically inside: %v", err)
	}
	if err := checkLinks(root); err == nil || !strings.Contains(err.Error(), "symlink b leads outside") {
		t.Fatalf("checkLinks = %v", err)
	}
}

// Limits: the download size, the unpacked size (a zip bomb), the entries.
func TestInstallLimits(t *testing.T) {
	bomb := []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}, {Name: "zeros", Body: strings.Repeat("\x00", 1<<20), Mode: 0o644}}
	many := []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}}
	for i := 0; i < 20; i++ {
		many = append(many, entry{Name: "f" + string(rune('a'+i)), Body: "x", Mode: 0o644})
	}
	tests := []struct {
		name    string
		entries []entry
		set     func(*Installer)
		want    string
	}{
		{"download", bomb, func(in *Installer) { in.MaxDownload = 100 }, "over the 100 byte limit"},
		{"unpacked", bomb, func(in *Installer) { in.MaxUnpacked = 64 << 10 }, "more than 65536 bytes"},
		{"entries", many, func(in *Installer) { in.MaxEntries = 10 }, "more than 10 entries"},
	}
	for _, tt := range tests {
		for _, format := range []string{"tar.gz", "zip"} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				in := testInstaller(t)
				tt.set(in)
				installMustFail(t, in, format, tt.entries, tt.want)
			})
		}
	}
}

// Format sanity: the bytes must be what the name says; installer packages
// are refused; a raw executable is installed as the command.
func TestInstallFormats(t *testing.T) {
	srv := newFileServer(t)
	zipData := makeZip(t, agentArchive())

	in := testInstaller(t)
	u := srv.put("/a.tar.gz", zipData)
	if _, err := in.Install(context.Background(), binaryAgent("x", "1.0.0", u, "", "./test-agent"), InstallOptions{}); err == nil ||
		!strings.Contains(err.Error(), "is not a tar.gz archive") {
		t.Fatalf("zip named .tar.gz: %v", err)
	}
	u = srv.put("/a.deb", zipData)
	if _, err := in.Install(context.Background(), binaryAgent("x", "1.0.0", u, "", "./test-agent"), InstallOptions{}); err == nil ||
		!strings.Contains(err.Error(), "not supported") {
		t.Fatalf(".deb: %v", err)
	}

	// A zip with no extension in its URL is sniffed.
	u = srv.put("/download/agent-zip", zipData)
	c, err := in.Install(context.Background(), binaryAgent("x", "1.0.0", u, "", "./test-agent"), InstallOptions{})
	if err != nil || run(t, c) != "hello from agent acp\n" {
		t.Fatalf("sniffed zip: %+v, %v", c, err)
	}

	// .tar.bz2 (and .tbz2) as the registry's FORMAT.md allows.
	bz2, err := os.ReadFile("testdata/archives/agent.tar.bz2")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/a.tar.bz2", "/a.tbz2"} {
		u = srv.put(name, bz2)
		c, err := in.Install(context.Background(), binaryAgent("bz"+strings.TrimPrefix(strings.ReplaceAll(name, ".", "-"), "/a"), "1.0.0", u, sum(bz2), "./test-agent"), InstallOptions{})
		if err != nil || run(t, c) != "hello from agent acp\n" {
			t.Fatalf("%s: %+v, %v", name, c, err)
		}
	}

	// A raw executable becomes the command, executable.
	u = srv.put("/download/raw-agent", []byte(agentScript))
	c, err = in.Install(context.Background(), binaryAgent("raw", "1.0.0", u, sum([]byte(agentScript)), "./bin/raw-agent"), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Cmd[0] != filepath.Join(in.Dir, "agents", "raw", "1.0.0", "bin", "raw-agent") || run(t, c) != "hello from agent acp\n" {
		t.Fatalf("raw: %+v", c)
	}

	// An archive wrapping everything in a top directory: cmd found inside.
	wrapped := makeTarGz(t, []entry{{Name: "agent-1.0.0/", Type: tar.TypeDir, Mode: 0o755}, {Name: "agent-1.0.0/test-agent", Body: agentScript, Mode: 0o644}})
	u = srv.put("/wrapped.tgz", wrapped)
	c, err = in.Install(context.Background(), binaryAgent("wrapped", "1.0.0", u, "", "./test-agent"), InstallOptions{})
	if err != nil || !strings.HasSuffix(c.Cmd[0], filepath.Join("agent-1.0.0", "test-agent")) || run(t, c) != "hello from agent acp\n" {
		t.Fatalf("wrapped (and made executable): %+v, %v", c, err)
	}

	// The command missing from the archive.
	u = srv.put("/nocmd.tar.gz", makeTarGz(t, []entry{{Name: "other", Body: "x", Mode: 0o755}}))
	if _, err := in.Install(context.Background(), binaryAgent("nocmd", "1.0.0", u, "", "./test-agent"), InstallOptions{}); err == nil ||
		!strings.Contains(err.Error(), "has no test-agent") {
		t.Fatalf("missing cmd: %v", err)
	}
	// A 404.
	if _, err := in.Install(context.Background(), binaryAgent("gone", "1.0.0", srv.URL+"/gone.zip", "", "./x"), InstallOptions{}); err == nil ||
		!strings.Contains(err.Error(), "404") {
		t.Fatalf("404: %v", err)
	}
}

// slowServer sends half of data, then waits until released or the client
// goes away.
func slowServer(t *testing.T, data []byte, withLength bool) (*httptest.Server, chan struct{}) {
	release := make(chan struct{})
	// Plain http (the archives served get a sha256): how a download stops
	// is the point, not its transport.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withLength {
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		}
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv, release
}

// Cancelling an install mid-download stops it and leaves nothing.
func TestInstallCancel(t *testing.T) {
	data := makeTarGz(t, []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}, {Name: "big", Body: strings.Repeat("x", 1<<20), Mode: 0o644}})
	srv, _ := slowServer(t, data, true)
	in := testInstaller(t)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		_, err := in.Install(ctx, binaryAgent("test-agent", "1.0.0", srv.URL+"/a.tar.gz", sum(data), "./test-agent"), InstallOptions{
			Progress: func(p Progress) {
				if p.Phase == PhaseDownload && p.Bytes > 0 {
					once.Do(func() { close(started) })
				}
			}})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if names := leftovers(t, in, "test-agent"); len(names) != 0 {
		t.Fatalf("left behind %v", names)
	}
}

// A download that stops sending fails after Stall; one cut short fails.
func TestInstallStallAndTruncation(t *testing.T) {
	data := makeTarGz(t, []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}, {Name: "big", Body: strings.Repeat("y", 1<<20), Mode: 0o644}})
	srv, _ := slowServer(t, data, false)
	in := testInstaller(t)
	in.Stall = 200 * time.Millisecond
	_, err := in.Install(context.Background(), binaryAgent("test-agent", "1.0.0", srv.URL+"/a.tar.gz", sum(data), "./test-agent"), InstallOptions{})
	if err == nil || !strings.Contains(err.Error(), "no data for 200ms") {
		t.Fatalf("stalled: %v", err)
	}

	short := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:len(data)/2]) // then the handler returns: the body is cut short
	}))
	defer short.Close()
	if _, err := in.Install(context.Background(), binaryAgent("test-agent", "1.0.0", short.URL+"/a.tar.gz", sum(data), "./test-agent"), InstallOptions{}); err == nil ||
		!strings.Contains(err.Error(), "EOF") {
		t.Fatalf("truncated: %v", err)
	}
	if names := leftovers(t, in, "test-agent"); len(names) != 0 {
		t.Fatalf("left behind %v", names)
	}
}

// With no Content-Length, progress says the total is unknown.
func TestInstallProgressUnknownTotal(t *testing.T) {
	data := makeTarGz(t, []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(data[:10])
		w.(http.Flusher).Flush() // chunked: no length announced
		w.Write(data[10:])
	}))
	defer srv.Close()
	in := testInstaller(t)
	var last Progress
	_, err := in.Install(context.Background(), binaryAgent("test-agent", "1.0.0", srv.URL+"/a.tar.gz", "", "./test-agent"), InstallOptions{
		Progress: func(p Progress) {
			if p.Phase == PhaseDownload {
				last = p
			}
		}})
	if err != nil || last.Total != -1 || last.Bytes != int64(len(data)) {
		t.Fatalf("last download progress %+v, %v", last, err)
	}
}

func TestPackageCommand(t *testing.T) {
	agent := func(kind string, p Package) Agent {
		a := Agent{ID: "a", Name: "A", Version: "1.2.3", Description: "d"}
		if kind == KindNpx {
			a.Distribution.Npx = &p
		} else {
			a.Distribution.Uvx = &p
		}
		return a
	}
	tests := []struct {
		name string
		kind string
		pkg  Package
		want []string
	}{
		{"npx pinned scoped", KindNpx, Package{Package: "@google/gemini-cli@0.27.3", Args: []string{"--experimental-acp"}}, []string{"npx", "-y", "@google/gemini-cli@0.27.3", "--experimental-acp"}},
		{"npx unpinned scoped", KindNpx, Package{Package: "@zed-industries/claude-code-acp"}, []string{"npx", "-y", "@zed-industries/claude-code-acp@1.2.3"}},
		{"npx unpinned", KindNpx, Package{Package: "opencode-ai", Args: []string{"acp"}}, []string{"npx", "-y", "opencode-ai@1.2.3", "acp"}},
		{"npx cmd", KindNpx, Package{Package: "@qwen-code/qwen-code@1.2.3", Cmd: "qwen", Args: []string{"--acp"}}, []string{"npx", "-y", "--package=@qwen-code/qwen-code@1.2.3", "--", "qwen", "--acp"}},
		{"uvx pinned", KindUvx, Package{Package: "fast-agent-acp==0.10.1", Args: []string{"-x"}}, []string{"uvx", "fast-agent-acp==0.10.1", "-x"}},
		{"uvx unpinned", KindUvx, Package{Package: "fast-agent-acp"}, []string{"uvx", "fast-agent-acp==1.2.3"}},
		{"uvx extras pinned", KindUvx, Package{Package: "hermes-agent[acp]==1.2.3"}, []string{"uvx", "hermes-agent[acp]==1.2.3"}},
		{"uvx at", KindUvx, Package{Package: "tool@1.2.3"}, []string{"uvx", "tool@1.2.3"}},
		{"uvx cmd", KindUvx, Package{Package: "hermes-agent[acp]", Cmd: "hermes-acp"}, []string{"uvx", "--from", "hermes-agent[acp]==1.2.3", "hermes-acp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := PackageCommand(agent(tt.kind, tt.pkg), tt.kind)
			if err != nil || !reflect.DeepEqual(c.Cmd, tt.want) || c.Kind != tt.kind || c.Version != "1.2.3" {
				t.Fatalf("got %+v, %v; want %q", c, err, tt.want)
			}
		})
	}
}

// fakeLauncher writes an executable named name into a temp dir that records
// its arguments into log and exits with code.
func fakeLauncher(t *testing.T, name string, code int) (path, log string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell script launcher")
	}
	dir := t.TempDir()
	log = filepath.Join(dir, "args")
	path = filepath.Join(dir, name)
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + log + "\necho 'npm ERR! 404 Not Found' >&2\nexit " + strconv.Itoa(code) + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path, log
}

// npx: the pinned package is fetched now (npx's cache), the command pins
// it, and the install shows; a missing npx says how to get Node.
func TestInstallNpx(t *testing.T) {
	a := Agent{ID: "gemini", Name: "Gemini CLI", Version: "0.27.3", Description: "d",
		Distribution: Distribution{Npx: &Package{Package: "@google/gemini-cli@0.27.3", Args: []string{"--experimental-acp"}, Env: map[string]string{"X": "1"}}}}
	in := testInstaller(t)
	if _, err := in.Install(context.Background(), a, InstallOptions{}); err == nil || !strings.Contains(err.Error(), "install Node.js") {
		t.Fatalf("no npx: %v", err)
	}
	if _, err := in.Resolve(a); err == nil || !strings.Contains(err.Error(), "install Node.js") {
		t.Fatalf("Resolve without npx: %v", err)
	}

	npx, log := fakeLauncher(t, "npx", 0)
	in.LookPath = func(name string) (string, error) {
		if name == "npx" {
			return npx, nil
		}
		return "", exec.ErrNotFound
	}
	// Before the install, Resolve gives the command (npx fetches on first start).
	if r, err := in.Resolve(a); err != nil || r.Installed || r.Cmd[0] != "npx" {
		t.Fatalf("Resolve before install: %+v, %v", r, err)
	}
	var phases []string
	c, err := in.Install(context.Background(), a, InstallOptions{Progress: func(p Progress) { phases = append(phases, p.Phase) }})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(log)
	if string(args) != "-y\n--package=@google/gemini-cli@0.27.3\n--\nnode\n--version\n" {
		t.Fatalf("prefetch ran npx with %q", args)
	}
	if !reflect.DeepEqual(c.Cmd, []string{"npx", "-y", "@google/gemini-cli@0.27.3", "--experimental-acp"}) || c.Env["X"] != "1" || !c.Installed {
		t.Fatalf("command %+v", c)
	}
	if !reflect.DeepEqual(phases, []string{PhasePrefetch, PhaseDone}) {
		t.Fatalf("phases %v", phases)
	}
	got, err := in.Installed("gemini")
	if err != nil || len(got) != 1 || got[0].Kind != KindNpx || got[0].Version != "0.27.3" {
		t.Fatalf("Installed = %+v, %v", got, err)
	}

	// npm failing (unknown version, no network) fails the install with its words.
	bad, _ := fakeLauncher(t, "npx", 1)
	in.LookPath = func(string) (string, error) { return bad, nil }
	a.Version = "0.28.0"
	a.Distribution.Npx.Package = "@google/gemini-cli@0.28.0"
	if _, err := in.Install(context.Background(), a, InstallOptions{}); err == nil || !strings.Contains(err.Error(), "npm ERR! 404") {
		t.Fatalf("failed prefetch: %v", err)
	}
}

// uvx: nothing to fetch ahead; a missing uvx says how to get uv.
func TestInstallUvx(t *testing.T) {
	a := Agent{ID: "fast-agent", Name: "fast-agent", Version: "0.10.1", Description: "d",
		Distribution: Distribution{Uvx: &Package{Package: "fast-agent-acp==0.10.1", Args: []string{"-x"}}}}
	in := testInstaller(t)
	if _, err := in.Install(context.Background(), a, InstallOptions{}); err == nil || !strings.Contains(err.Error(), "install uv") {
		t.Fatalf("no uvx: %v", err)
	}
	in.LookPath = func(name string) (string, error) { return "/usr/bin/" + name, nil }
	c, err := in.Install(context.Background(), a, InstallOptions{})
	if err != nil || !reflect.DeepEqual(c.Cmd, []string{"uvx", "fast-agent-acp==0.10.1", "-x"}) {
		t.Fatalf("got %+v, %v", c, err)
	}
}

// The kind chosen: binary for this platform first, else npx, else uvx;
// asking for a kind that cannot work says why.
func TestInstallKindChoice(t *testing.T) {
	a := Agent{ID: "multi", Name: "M", Version: "1.0.0", Description: "d", Distribution: Distribution{
		Binary: map[string]BinaryTarget{"darwin-aarch64": {Archive: "https://x/a.zip", Cmd: "./a"}},
		Npx:    &Package{Package: "m@1.0.0"},
	}}
	in := testInstaller(t)
	kinds, why := in.Usable(a)
	if len(kinds) != 0 || len(why) != 2 || !strings.Contains(why[0], "no binary for linux-x86_64 (built for darwin-aarch64)") || !strings.Contains(why[1], "Node.js") {
		t.Fatalf("Usable = %v, %q", kinds, why)
	}
	if _, err := in.Install(context.Background(), a, InstallOptions{}); err == nil || !strings.Contains(err.Error(), "cannot be installed here") {
		t.Fatalf("err = %v", err)
	}
	in.LookPath = func(name string) (string, error) { return "/usr/bin/" + name, nil }
	if kinds, _ := in.Usable(a); !reflect.DeepEqual(kinds, []string{KindNpx}) {
		t.Fatalf("Usable = %v", kinds)
	}
	if _, err := in.Install(context.Background(), a, InstallOptions{Kind: KindBinary}); err == nil || !strings.Contains(err.Error(), "no binary for") {
		t.Fatalf("asked binary: %v", err)
	}
	in.Platform = "darwin-aarch64"
	if kinds, _ := in.Usable(a); !reflect.DeepEqual(kinds, []string{KindBinary, KindNpx}) {
		t.Fatalf("Usable on darwin = %v", kinds)
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.10.0", "1.9.0", 1},
		{"1.9.0", "1.10.0", -1},
		{"2.0.0", "2.0.0", 0},
		{"2.0.0", "2.0.0-preview.1", 1},
		{"2.0.0-preview.2", "2.0.0-preview.1", 1},
		{"0.85.2-preview.22", "0.85.1", 1},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// BenchmarkInstallTarGz installs a 16 MiB agent archive (download from a
// local server, sha256, unpack, rename): the cost nvim-acp adds to the
// network time of a real install.
func BenchmarkInstallTarGz(b *testing.B) {
	body := make([]byte, 16<<20)
	for i := range body {
		body[i] = byte(i * 2654435761 >> 13) // poorly compressible
	}
	data := makeTarGz(b, []entry{{Name: "test-agent", Body: agentScript, Mode: 0o755}, {Name: "lib/blob", Body: string(body), Mode: 0o644}})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	defer srv.Close()
	in := &Installer{Dir: b.TempDir(), Platform: "linux-x86_64", Client: testClient()}
	a := binaryAgent("bench", "1.0.0", srv.URL+"/a.tar.gz", sum(data), "./test-agent")
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := in.Install(context.Background(), a, InstallOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Bug: a failed first download (offline) left an empty agents/<id> folder.
// Nothing is left of an install that failed.
func TestInstallFailureLeavesNoFolder(t *testing.T) {
	srv := newFileServer(t)
	in := testInstaller(t)
	a := binaryAgent("test-agent", "1.0.0", srv.URL+"/missing.tar.gz", strings.Repeat("0", 64), "./test-agent")
	if _, err := in.Install(context.Background(), a, InstallOptions{}); err == nil {
		t.Fatal("installed from a missing archive")
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "agents", "test-agent")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("agents/test-agent after a failed install: %v", err)
	}
}
