//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stubPickAndInput replaces vim.ui.select (it takes the item shown as one
// of want, in that order of preference) and vim.ui.input (it answers
// answer), both synchronously, as a user picking at once would.
func stubPickAndInput(e *Editor, answer string, want ...string) {
	e.t.Helper()
	e.Lua(`local answer, want = ...
vim.ui.select = function(items, opts, on_choice)
  for _, w in ipairs(want) do
    for i, it in ipairs(items) do
      if (opts.format_item and opts.format_item(it) or tostring(it)) == w then return on_choice(it, i) end
    end
  end
  on_choice(nil, nil)
end
vim.ui.input = function(_, on_confirm) on_confirm(answer) end`, nil, answer, want)
}

// keepReleasingFIFO opens the FIFO at p (see releaseFIFO) every 50 ms from
// the test's end until p is gone (the workspace removed) or a minute has
// passed, so that a Neovim stuck opening it, again and again (the bug),
// gets out and answers the harness's last questions.
func keepReleasingFIFO(t *testing.T, p string) {
	t.Cleanup(func() {
		go func() {
			for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
				if _, err := os.Lstat(p); err != nil {
					return
				}
				releaseFIFO(p)
				time.Sleep(50 * time.Millisecond) // a pace, not synchronisation
			}
		}()
	})
}

// Files the plugin reads on the user's behalf are regular files only: `ga`
// on a code block naming a FIFO, an image path that is a FIFO pasted into
// the prompt or given to :AcpAdd never open it (Neovim would block in
// open(2) for good); the user is told why.
func TestSafetyFIFONeverReadForUser(t *testing.T) {
	for _, how := range []string{"ga on a block naming it", "ga on a file typed in", "image pasted", "AcpAdd image"} {
		t.Run(how, func(t *testing.T) {
			e, ws := fsEditor(t)
			name := "pipe.txt"
			if strings.Contains(how, "image") {
				name = "pipe.png"
			}
			fifo := filepath.Join(ws, name)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			keepReleasingFIFO(t, fifo)
			info := "txt " + name
			if how == "ga on a file typed in" {
				info = "txt"
			}
			e.SetupFake(M{
				"initialize": M{"agentCapabilities": M{"promptCapabilities": M{"image": true}}},
				"turns":      []any{[]any{text("Here:\n\n```" + info + "\nnew text\n```\n\nDone.")}, []any{text("seen")}},
			}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("show me")
			e.WaitState("ready")
			switch how {
			case "ga on a block naming it", "ga on a file typed in":
				stubPickAndInput(e, name, name, "Another file...", "Replace the whole file (0 lines)")
				e.Lua(`local s = require("acp")._session()
					vim.api.nvim_set_current_win(s.chat_win)
					vim.api.nvim_win_set_cursor(0, { 1, 0 })`, nil)
				e.input("]]ga")
				e.responsive(how)
			case "image pasted":
				e.Lua(`local text = ...; vim.schedule(function() require("acp").send(text) end)`, nil, "what is in "+fifo+"?")
				e.responsive(how)
				e.WaitState("ready")
				for _, b := range promptBlocks(e)[1:] {
					if b["type"] == "image" {
						t.Fatalf("the FIFO went as an image: %v", b)
					}
				}
			case "AcpAdd image":
				e.Lua(`vim.schedule(function() vim.cmd("AcpAdd pipe.png") end)`, nil)
				e.responsive(how)
			}
			if how != "image pasted" {
				e.Eventually("a message saying why", 10*time.Second, func() bool {
					return strings.Contains(e.Messages(), fifo+" is a FIFO, not a regular file")
				})
			}
		})
	}
}
