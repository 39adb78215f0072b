package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"
)

// TestFsTypingWhileAgentWrites is the attack of issue 31 item 1, as a
// stress test bounded in time: an agent reads, thinks and writes a file
// over and over (each write its read with the first line changed) while
// the user keeps typing into its buffer, a line every few milliseconds
// (through RPC, or as keys in the window showing it), saving it now and
// then. Every typed line must survive, whatever the interleaving, and the
// agent's last applied write must be there; the host must live through it
// and Neovim answer once the turn is over.
func TestFsTypingWhileAgentWrites(t *testing.T) {
	parallel(t)
	for _, tc := range []struct {
		name          string
		rounds, think int // agent rounds, milliseconds between read and write
		keys          bool
		saveEvery     int  // the user writes the buffer every this many lines (0: never)
		announce      bool // each write announced first, as a diff with its new text only
	}{
		{"rpc edits", 20, 30, false, 0, false},
		{"keys", 20, 30, true, 0, false},
		{"rpc edits and saves", 20, 30, false, 25, false},
		{"long windows", 4, 200, false, 0, false},
		{"announced writes", 20, 30, false, 0, true},
		{"announced writes, long windows", 4, 200, true, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "notes.txt")
			fsPutFile(t, p, "header\nbody\n")
			b := e.loadBuffer(p)
			e.SetupFake(M{"turns": []any{[]any{
				M{"edit_loop": M{"path": p, "count": tc.rounds, "sleep_ms": tc.think, "text": "agent", "announce": tc.announce}},
			}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			if tc.keys {
				e.Lua(`vim.cmd("wincmd p"); vim.api.nvim_win_set_buf(0, ...); vim.cmd("normal! G")`, nil, b)
				e.fsInput("o")
			}
			e.Send("edit it")
			typed := 0
			deadline := time.Now().Add(90 * time.Second)
			for {
				if typed%10 == 0 {
					if st := e.Status(); st.State == "ready" && st.StopReason != "" {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("the agent's %d rounds did not end in time; status %+v", tc.rounds, e.Status())
				}
				typed++
				line := fmt.Sprintf("user %d", typed)
				if tc.keys {
					e.fsInput(line + "<CR>")
				} else if err := e.nv.SetBufferLines(nvim.Buffer(b), -1, -1, true, [][]byte{[]byte(line)}); err != nil {
					t.Fatalf("typing %q: %v", line, err)
				}
				if tc.saveEvery > 0 && typed%tc.saveEvery == 0 {
					e.Lua(`vim.api.nvim_buf_call(..., function() vim.cmd("silent write!") end)`, nil, b)
				}
				time.Sleep(3 * time.Millisecond) // the user's pace, not synchronisation
			}
			if tc.keys {
				e.fsInput("<Esc>")
			}
			e.responsive("after the turn")
			writes := e.fsAnswers("fs/write_text_file")
			if len(writes) != tc.rounds {
				t.Fatalf("%d answers to the agent's %d writes", len(writes), tc.rounds)
			}
			lines := e.bufLines(b)
			have := map[string]bool{}
			for _, l := range lines {
				have[l] = true
			}
			var lost []string
			for i := 1; i <= typed; i++ {
				if l := fmt.Sprintf("user %d", i); !have[l] {
					lost = append(lost, l)
				}
			}
			if len(lost) > 0 {
				t.Errorf("%d of %d typed lines lost (first: %q); write answers: %+v", len(lost), typed, lost[0], writes)
			}
			last := -1
			for i, w := range writes {
				if w.OK {
					last = i
				}
			}
			if last >= 0 && !have[fmt.Sprintf("agent %d", last+1)] {
				t.Errorf("the agent's last applied write (round %d) is not in the buffer: %q", last+1, lines[:min(3, len(lines))])
			}
			if txt := e.fsPromptText(); txt != "" {
				t.Errorf("a question is open after the turn: %q", txt)
			}
			if log := e.HostLog(); strings.Contains(log, "panic") {
				t.Errorf("the host panicked:\n%s", log[max(0, strings.Index(log, "panic")-200):])
			}
			t.Logf("%d lines typed, %d of %d writes applied", typed, countOK(writes), len(writes))
		})
	}
}

func countOK(as []fsAnswer) int {
	n := 0
	for _, a := range as {
		if a.OK {
			n++
		}
	}
	return n
}
