package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demoTurn sends prompt to the demo agent, answers its permission requests
// with choice, and waits for the end of the turn.
func (e *Editor) demoTurn(prompt, choice string) {
	e.t.Helper()
	e.Send(prompt)
	e.Eventually("end of the demo's turn", 60*time.Second, func() bool {
		st := e.Status()
		if st.State == "awaiting_permission" {
			var ok bool
			e.Lua(`return require("acp").respond_permission(...)`, &ok, choice)
		}
		return st.State == "ready" && st.StopReason != ""
	})
}

// Bug: the demo agent joined an @path at the end of a prompt with the next
// context block (text blocks concatenated without a separator), and
// promised "`u` undoes it" when the file was not loaded.
func TestDemoPromptWithContextBlocks(t *testing.T) {
	e, ws := fsEditor(t)
	fsPutFile(t, filepath.Join(ws, "README.md"), "# demo\n\nthree lines\n")
	fsPutFile(t, filepath.Join(ws, "code.lua"), "local a = 1\nreturn a\n")
	e.Lua(`vim.cmd.edit("code.lua")`, nil)
	e.Chat("demo")
	e.WaitState("ready")
	// A range added from the buffer goes as a fenced text block (the demo
	// takes no embedded context) after the prompt's own text block.
	e.Lua(`vim.cmd("wincmd p | 1,2AcpAdd")`, nil)
	e.demoTurn("Please tidy up @README.md", "allow_once")
	txt := e.ChatText()
	indexOrder(t, txt, "> Please tidy up @README.md\n", "Read "+filepath.Join(ws, "README.md")+"  (read, completed)",
		"has **3 lines**")
	if strings.Contains(txt, "@README.md```") || strings.Contains(txt, "Could not read") {
		t.Fatalf("the prompt and the context block ran together:\n%s", txt)
	}
	if !strings.Contains(txt, "code.lua:1-2") {
		t.Fatalf("the demo does not mention the context it got:\n%s", txt)
	}
	// nvim-acp-demo.txt is not loaded: `u` cannot undo the edit.
	if strings.Contains(txt, "`u` in its buffer undoes it") {
		t.Fatalf("the demo promises an undo that does not exist:\n%s", txt)
	}
	if !strings.Contains(txt, ":AcpDiff") {
		t.Fatalf("the demo does not say how to take the edit back:\n%s", txt)
	}
}
