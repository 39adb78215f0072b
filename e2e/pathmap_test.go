package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nsPrefix is a command prefix running its command in a mount namespace of
// its own where the workspace ws is at /home/agent/workspace (and /home is
// empty otherwise): an agent in a container, as `docker exec -i` runs it.
func nsPrefix(t *testing.T, ws string) []string {
	t.Helper()
	if err := exec.Command("unshare", "--mount", "--map-root-user", "true").Run(); err != nil {
		t.Fatalf("this test runs the agent in a mount namespace of its own (unshare --mount --map-root-user): %v", err)
	}
	script := fmt.Sprintf("mount -t tmpfs tmpfs /home && mkdir -p /home/agent/workspace && "+
		"mount --bind '%s' /home/agent/workspace && cd /home/agent/workspace && exec \"$@\"", ws)
	return []string{"unshare", "--mount", "--map-root-user", "sh", "-c", script, "ns"}
}

// TestPathMapThroughPrefix: an agent run through a prefix in another mount
// namespace sees the workspace at /home/agent/workspace; every path it
// sends is translated to the user's files (its reads get the unsaved
// buffer, its writes land in the workspace), paths outside the mapped root
// (../, absolute, through a symlink) are refused, the session's cwd and the
// prompt's @file context reach it as its own paths, and its terminals run
// here (terminal_host "local") or there ("agent").
func TestPathMapThroughPrefix(t *testing.T) {
	parallel(t)
	for _, host := range []string{"local", "agent"} {
		t.Run(host, func(t *testing.T) {
			e, ws := fsEditor(t)
			notes := filepath.Join(ws, "notes.txt")
			fsPutFile(t, notes, "saved line\n")
			os.Mkdir(filepath.Join(ws, "sub"), 0o755)
			outside := t.TempDir()
			fsPutFile(t, filepath.Join(outside, "secret"), "not for the agent\n")
			if err := os.Symlink(outside, filepath.Join(ws, "escape")); err != nil {
				t.Fatal(err)
			}
			b := e.loadBuffer(notes)
			e.setLines(b, 0, -1, []string{"unsaved line"})
			const root = "/home/agent/workspace"
			path := e.writeScenario(M{"turns": []any{[]any{
				fsRead(root+"/notes.txt", nil),
				fsWrite(root+"/out/new.txt", "written by the agent\n"),
				fsRead(root+"/../../../etc/hostname", nil),
				fsRead("/etc/hostname", nil),
				fsRead(root+"/escape/secret", nil),
				update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Look at notes", "kind": "read", "status": "completed",
					"locations": []any{M{"path": root + "/notes.txt", "line": 3}, M{"path": "/opt/elsewhere/x.txt"}}}),
				M{"request": "terminal/create", "params": M{"command": "pwd; cat " + root + "/notes.txt", "cwd": root + "/sub"}, "save": "t"},
				request("terminal/wait_for_exit", M{"terminalId": "$t"}),
				request("terminal/output", M{"terminalId": "$t"}),
				text("mapped turn done"),
			}}})
			e.setupAgent(M{
				"cmd":           []string{fakeBin},
				"env":           M{"FAKE_AGENT_SCENARIO": path, "FAKE_AGENT_LOG": e.AgentLog},
				"prefix":        nsPrefix(t, ws),
				"path_map":      M{root: ws},
				"terminal_host": host,
			}, allowCommands)
			e.Chat("fake")
			e.WaitState("ready")
			e.Lua(`vim.cmd("AcpAdd notes.txt")`, nil)
			e.Send("go")
			if st := e.WaitState("ready"); st.StopReason != "end_turn" {
				t.Fatalf("turn ended %+v", st)
			}
			e.waitChat("mapped turn done")

			reads := e.fsAnswers("fs/read_text_file")
			if len(reads) != 4 {
				t.Fatalf("reads answered: %+v", reads)
			}
			if !reads[0].OK || reads[0].Content != "unsaved line\n" {
				t.Fatalf("the mapped read answered %+v, want the buffer's unsaved text", reads[0])
			}
			for i, want := range []string{"outside every mapped root", "outside every mapped root", "symlink"} {
				r := reads[i+1]
				if r.OK || !strings.Contains(r.Message, want) {
					t.Fatalf("hostile read %d answered %+v, want an error with %q", i+1, r, want)
				}
			}
			if writes := e.fsAnswers("fs/write_text_file"); len(writes) != 1 || !writes[0].OK {
				t.Fatalf("write answered %+v", writes)
			}
			if got := fsGetFile(t, filepath.Join(ws, "out", "new.txt")); got != "written by the agent\n" {
				t.Fatalf("the write landed as %q", got)
			}
			txt := e.ChatText()
			if !strings.Contains(txt, "    notes.txt:3") || strings.Contains(txt, "/opt/elsewhere") {
				t.Fatalf("tool call locations in the chat:\n%s", txt)
			}
			outs := e.AgentResponses("terminal/output")
			if len(outs) != 1 {
				t.Fatalf("terminal/output answers %v", outs)
			}
			out := fmt.Sprint(outs[0]["result"])
			want := map[string]string{"local": filepath.Join(ws, "sub"), "agent": root + "/sub\nsaved line"}[host]
			if !strings.Contains(out, want) {
				t.Fatalf("terminal output %s, want %q", out, want)
			}
			// What the agent got: its own paths.
			var cwd, uri string
			for _, ev := range e.AgentEvents() {
				params, _ := ev["params"].(map[string]any)
				switch {
				case ev["event"] == "recv" && ev["method"] == "session/new":
					cwd, _ = params["cwd"].(string)
				case ev["event"] == "recv" && ev["method"] == "session/prompt":
					blocks, _ := params["prompt"].([]any)
					for _, b := range blocks {
						m, _ := b.(map[string]any)
						if r, ok := m["resource"].(map[string]any); ok {
							uri, _ = r["uri"].(string)
						}
						if u, ok := m["uri"].(string); ok {
							uri = u
						}
					}
				}
			}
			if cwd != root || uri != "file://"+root+"/notes.txt" {
				t.Fatalf("the agent got cwd %q and context %q", cwd, uri)
			}
		})
	}
}
