package e2e

// Helpers of the Linux-only tests that the portable ones use too.

import "time"

// responsive fails the test unless Neovim answers a call within 10 s.
func (e *Editor) responsive(what string) {
	e.t.Helper()
	done := make(chan error, 1)
	go func() {
		var n int
		done <- e.nv.ExecLua(`return 1`, &n)
	}()
	select {
	case err := <-done:
		if err != nil {
			e.t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		e.t.Fatalf("%s: Neovim is frozen (no answer in 10s)", what)
	}
}

// undoOnce presses u once in a window showing buffer b.
func (e *Editor) undoOnce(b int) {
	e.t.Helper()
	e.Lua(`local b = ...
		local w = vim.fn.bufwinid(b)
		if w < 0 then vim.cmd("botright split | buffer " .. b) else vim.fn.win_gotoid(w) end`, nil, b)
	e.fsInput("<Esc>u")
	e.responsive("after u")
}

// answerPrompt waits for the session to ask and answers choice.
func (e *Editor) answerPrompt(choice string) {
	e.t.Helper()
	e.WaitState("awaiting_permission")
	var ok bool
	e.Lua(`return require("acp").respond_permission(...)`, &ok, choice)
	if !ok {
		e.t.Fatalf("respond_permission(%q) found no request", choice)
	}
}
