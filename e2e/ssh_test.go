package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/transport"
)

// sshPrefix starts an OpenSSH server of the test's own on loopback (its
// own host key, the test's key the only one it takes, as the user running
// the test) and returns `ssh ... USER@127.0.0.1`, the prefix a user writes
// for an agent on another machine. What sshd starts is not a descendant of
// the ssh client here: killing the client leaves it running, as with a
// real remote host.
func sshPrefix(t *testing.T) []string {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Fatalf("this test runs a real sshd on loopback (Debian: apt-get install openssh-server; scripts/install-tools does as root): %v", err)
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if me.Uid == "0" {
		// sshd run by root checks its privilege separation directory.
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	for _, k := range []string{"host", "user"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v %s", err, out)
		}
	}
	pub, err := os.ReadFile(filepath.Join(dir, "user.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	config := fmt.Sprintf("Port %d\nListenAddress 127.0.0.1\nHostKey %s\nAuthorizedKeysFile %s\n"+
		"StrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"+
		"PermitRootLogin prohibit-password\nPidFile none\n",
		port, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"))
	if err := os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// A file, not a pipe: the sessions' processes inherit it.
	logFile := filepath.Join(dir, "sshd.log")
	cmd := exec.Command(sshd, "-D", "-f", filepath.Join(dir, "sshd_config"), "-E", logFile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := func() string { b, _ := os.ReadFile(logFile); return string(b) }
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sshd's log:\n%s", log())
		}
	})
	prefix := []string{"ssh", "-p", fmt.Sprint(port), "-i", filepath.Join(dir, "user"),
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes",
		"-o", "LogLevel=ERROR", me.Username + "@127.0.0.1"}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command(prefix[0], append(prefix[1:], "echo ready")...).CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) == "ready" {
			return prefix
		}
		if time.Now().After(deadline) {
			t.Fatalf("ssh through the test's sshd: %v %s\nsshd's log:\n%s", err, out, log())
		}
		<-time.After(50 * time.Millisecond)
	}
}

// containerPrefix starts a "container" (a process holding a user and
// mount namespace of its own where the workspace ws is at
// /home/agent/workspace) and returns the prefix entering it, as `docker
// exec -i CONTAINER` enters one: every command run through it shares the
// container's namespaces, where nsPrefix makes new ones each time.
func containerPrefix(t *testing.T, ws string) []string {
	t.Helper()
	script := fmt.Sprintf("mount -t tmpfs tmpfs /home && mkdir -p /home/agent/workspace && "+
		"mount --bind '%s' /home/agent/workspace && echo ready && exec sleep 100000", ws)
	holder := exec.Command("unshare", "--mount", "--map-root-user", "sh", "-c", script)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("this test runs the agent in a mount namespace of its own (unshare --mount --map-root-user): %q %v", line, err)
	}
	return []string{"nsenter", "-t", fmt.Sprint(holder.Process.Pid), "-U", "-m", "--preserve-credentials",
		"sh", "-c", `cd /home/agent/workspace && exec "$@"`, "ns"}
}

// TestAgentThroughSSH: an agent run on "another machine" through a real
// ssh (OpenSSH client and server on loopback), in a mount namespace of its
// own there (a container's, entered as docker exec does) where the
// workspace is /home/agent/workspace: ssh joins the
// prefix's words into one line for the remote shell, and every path still
// crosses mapped (its read gets the unsaved buffer, its write lands here),
// its terminal (terminal_host "agent") runs there in its own view of the
// cwd, and a terminal/kill ends the command there, where killing the ssh
// client here alone does not. A prefix that makes a new namespace at each
// run (unshare, docker run) cannot reach the command's processes: the chat
// says it may still run there.
func TestAgentThroughSSH(t *testing.T) {
	parallel(t)
	for _, c := range []struct {
		name  string
		fresh bool // the prefix makes a new namespace at each run (unshare), not one entered each time
	}{{"container", false}, {"new namespace at each run", true}} {
		t.Run(c.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			notes := filepath.Join(ws, "notes.txt")
			fsPutFile(t, notes, "saved line\n")
			os.Mkdir(filepath.Join(ws, "sub"), 0o755)
			b := e.loadBuffer(notes)
			e.setLines(b, 0, -1, []string{"unsaved line"})
			const root = "/home/agent/workspace"
			path := e.writeScenario(M{"turns": []any{[]any{
				fsRead(root+"/notes.txt", nil),
				fsWrite(root+"/out/new.txt", "written over ssh\n"),
				M{"request": "terminal/create", "params": M{"command": "pwd; cat " + root + "/notes.txt; echo $$ >" + root + "/main.pid; exec sleep 1000", "cwd": root + "/sub"}, "save": "t"},
				terminalTool("x1", "Sleep", "t"),
				// The far command wrote its pid after its output, which
				// comes back through ssh after that: a real agent reads
				// terminal/output until it has what it waits for.
				M{"wait_file": filepath.Join(ws, "main.pid"), "timeout_ms": 60000},
				M{"request": "terminal/output", "params": M{"terminalId": "$t"}, "until": "saved line", "timeout_ms": 60000},
				request("terminal/kill", M{"terminalId": "$t"}),
				text("ssh turn done"),
			}}})
			// As a user writes it: ssh, then what runs there (here: the agent in a
			// mount namespace where the workspace is at root), each word as the
			// remote shell reads it.
			var ns []string
			if c.fresh {
				ns = nsPrefix(t, ws)
			} else {
				ns = containerPrefix(t, ws)
			}
			prefix := append(sshPrefix(t), "env", "FAKE_AGENT_SCENARIO="+path, "FAKE_AGENT_LOG="+e.AgentLog)
			for _, w := range ns {
				prefix = append(prefix, transport.ShellQuote(w))
			}
			e.setupAgent(M{
				"cmd":           []string{fakeBin},
				"prefix":        prefix,
				"path_map":      M{root: ws},
				"terminal_host": "agent",
			}, allowCommands)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("go")
			if st := e.WaitState("ready"); st.StopReason != "end_turn" {
				t.Fatalf("turn ended %+v", st)
			}
			e.waitChat("ssh turn done")

			if reads := e.fsAnswers("fs/read_text_file"); len(reads) != 1 || !reads[0].OK || reads[0].Content != "unsaved line\n" {
				t.Fatalf("the read over ssh answered %+v, want the buffer's unsaved text", reads)
			}
			if got := fsGetFile(t, filepath.Join(ws, "out", "new.txt")); got != "written over ssh\n" {
				t.Fatalf("the write landed as %q", got)
			}
			outs := e.AgentResponses("terminal/output")
			if len(outs) != 1 || !strings.Contains(fmt.Sprint(outs[0]["result"]), root+"/sub\nsaved line") {
				t.Fatalf("terminal/output answers %v, want its cwd %s/sub and the file as there", outs, root)
			}
			pid := readPid(t, filepath.Join(ws, "main.pid"))
			t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) }) // whatever the test found
			if c.fresh {
				// The stop lands in a namespace of its own, where the
				// command's processes cannot be read: the chat says so.
				e.waitChat("could not end its command where it runs (it may still run there)")
				e.waitChat("cannot be read here")
				if !alive(pid) {
					t.Fatalf("the far command %d is gone: the test did not keep it out of the stop's reach", pid)
				}
				return
			}
			e.Eventually("the killed terminal's command gone on the far side", 20*time.Second, func() bool { return !alive(pid) })
		})
	}
}
