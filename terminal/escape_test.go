package terminal

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procAlive reports whether pid runs (a zombie does not).
func procAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// A command's setsid child that ignores SIGTERM left its process group and
// survived every end of its terminal; with a Tag, each end reaches it.
func TestEscapedChildDiesWithItsTerminal(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid(1)")
	}
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc")
	}
	for _, end := range []string{"kill", "release", "killall", "close"} {
		t.Run(end, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pid")
			m := newManager(t, Options{KillGrace: 100 * time.Millisecond, Tag: fmt.Sprintf("test-%d/", os.Getpid())})
			// The child ignores SIGTERM and SIGHUP, and is in a session of its own.
			id := create(t, m, sh(`setsid sh -c 'trap "" TERM HUP INT; echo $$ > `+pidfile+`; exec sleep 1000' & sleep 1000`))
			var child int
			eventually(t, testTimeout, "the child's pid", func() bool {
				b, _ := os.ReadFile(pidfile)
				child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				return child > 0 && procAlive(child)
			})
			if pgid, _ := syscall.Getpgid(child); pgid != child {
				t.Fatalf("the child is in process group %d, not its own", pgid)
			}
			switch end {
			case "kill":
				if err := m.Kill(id); err != nil {
					t.Fatal(err)
				}
			case "release":
				if err := m.Release(id); err != nil {
					t.Fatal(err)
				}
			case "killall":
				m.KillAll()
			case "close":
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			}
			eventually(t, testTimeout, "the escaped child to die", func() bool { return !procAlive(child) })
		})
	}
}
