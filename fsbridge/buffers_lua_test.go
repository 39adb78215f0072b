package fsbridge

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// findNvim returns NVIM_BIN or `nvim` from PATH if it is Neovim >= 0.10.
func findNvim(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("NVIM_BIN")
	if bin == "" {
		p, err := exec.LookPath("nvim")
		if err != nil {
			t.Skip("Neovim not found: set NVIM_BIN or put nvim (>= 0.10) on PATH")
		}
		bin = p
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Skipf("%s --version: %v", bin, err)
	}
	m := regexp.MustCompile(`NVIM v(\d+)\.(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Skipf("%s: cannot read the version", bin)
	}
	major, _ := strconv.Atoi(string(m[1]))
	minor, _ := strconv.Atoi(string(m[2]))
	if major == 0 && minor < 10 {
		t.Skipf("%s is Neovim %d.%d; lua/acp/buffers.lua needs 0.10+", bin, major, minor)
	}
	return bin
}

// TestBuffersLua runs fsbridge/testdata/buffers_test.lua, the tests of
// lua/acp/buffers.lua, in a headless Neovim.
func TestBuffersLua(t *testing.T) {
	bin := findNvim(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "-u", "NONE", "-i", "NONE", "-n",
		"--cmd", "set rtp^="+repo, "-l", filepath.Join("testdata", "buffers_test.lua"))
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		t.Log(strings.TrimRight(l, "\r"))
	}
	if err != nil || !strings.Contains(string(out), "all ok") {
		t.Fatalf("buffers_test.lua failed: %v", err)
	}
}
