package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// An archive is trusted to its https URL, or to the checksum the registry
// gives: a plain http archive with no sha256 is refused before anything is
// downloaded or run, also when an https URL redirects to http.
func TestInstallHTTPNeedsChecksum(t *testing.T) {
	data := makeTarGz(t, agentArchive())
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(data) }))
	t.Cleanup(plain.Close)
	httpURL := plain.URL + "/a.tar.gz"
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a.tar.gz":
			w.Write(data)
		case "/moved.tar.gz":
			http.Redirect(w, r, httpURL, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(tls.Close)
	for _, tc := range []struct {
		name, url, sha string
		ok             bool
	}{
		{"http without sha256", httpURL, "", false},
		{"http with a verified sha256", httpURL, sum(data), true},
		{"https without sha256", tls.URL + "/a.tar.gz", "", true},
		{"https redirected to http, no sha256", tls.URL + "/moved.tar.gz", "", false},
		{"https redirected to http, verified", tls.URL + "/moved.tar.gz", sum(data), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testInstaller(t)
			in.Client = tls.Client()
			c, err := in.Install(context.Background(), binaryAgent("test-agent", "1.0.0", tc.url, tc.sha, "./test-agent"), InstallOptions{})
			if tc.ok != (err == nil) {
				t.Fatalf("installed = %v (%v), want %v", err == nil, err, tc.ok)
			}
			if !tc.ok {
				if !strings.Contains(err.Error(), "not https") {
					t.Fatalf("err = %v", err)
				}
				if names := leftovers(t, in, "test-agent"); len(names) != 0 {
					t.Fatalf("left behind %v", names)
				}
				return
			}
			if out := run(t, c); !strings.Contains(out, "hello from agent") {
				t.Fatalf("ran: %q", out)
			}
		})
	}
}

// A package's cmd is a program, never an option of npx or uvx
// (`--index-url=...` would make uvx fetch from another index).
func TestPackageCmdIsAProgram(t *testing.T) {
	for _, cmd := range []string{"--index-url=https://evil.example/simple", "-v", " x", "a b", "x\ny", ""} {
		for _, kind := range []string{KindNpx, KindUvx} {
			p := &Package{Package: "pkg==1.0.0", Cmd: cmd}
			a := Agent{ID: "a", Name: "A", Version: "1.0.0", Description: "d"}
			if kind == KindNpx {
				a.Distribution.Npx = p
			} else {
				a.Distribution.Uvx = p
			}
			err := a.Validate()
			c, cerr := PackageCommand(a, kind)
			if cmd == "" {
				if err != nil || cerr != nil {
					t.Errorf("%s without cmd: %v, %v", kind, err, cerr)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), "cmd") {
				t.Errorf("%s cmd %q passed Validate", kind, cmd)
			}
			if cerr == nil {
				t.Errorf("%s cmd %q: PackageCommand gave %q", kind, cmd, c.Cmd)
			}
		}
	}
}

func TestRiskyEnv(t *testing.T) {
	t.Setenv("NVIM_ACP_TEST_SAME", "v")
	got := RiskyEnv(map[string]string{
		"LD_PRELOAD": "/x.so", "PATH": "/evil", "NODE_OPTIONS": "--require /x.js", "PYTHONPATH": ".",
		"DROID_DISABLE_AUTO_UPDATE": "true", "TERM": "dumb", "NO_COLOR": "1", "LC_ALL": "C", "NVIM_ACP_TEST_SAME": "v",
	})
	want := []string{"DROID_DISABLE_AUTO_UPDATE", "LD_PRELOAD", "NODE_OPTIONS", "PATH", "PYTHONPATH"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("RiskyEnv = %v, want %v", got, want)
	}
	if got := RiskyEnv(nil); len(got) != 0 {
		t.Fatalf("RiskyEnv(nil) = %v", got)
	}
}
