package e2e

import (
	"strings"
	"testing"
	"time"
)

// bufMapDesc is the desc of buf's mapping of lhs in mode ("" when unmapped).
func (e *Editor) bufMapDesc(buf int, mode, lhs string) string {
	e.t.Helper()
	var desc string
	e.Lua(`local buf, mode, lhs = ...
		local want = vim.api.nvim_replace_termcodes(lhs, true, true, true)
		for _, m in ipairs(vim.api.nvim_buf_get_keymap(buf, mode)) do
			if vim.api.nvim_replace_termcodes(m.lhs, true, true, true) == want then return m.desc or "?" end
		end
		return ""`, &desc, buf, mode, lhs)
	return desc
}

func (e *Editor) input(keys string) {
	e.t.Helper()
	if _, err := e.nv.Input(keys); err != nil {
		e.t.Fatal(err)
	}
}

// Every chat and input key is configurable (false turns it off), and `?`
// in the chat lists the keys in force.
func TestKeymapsConfigurable(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{text("answered")}}}, M{"keymaps": M{
		"input": M{"send": "<C-t>", "hide": false},
		"chat":  M{"help": "g?", "goto_file": []string{"gf", "<C-]>"}},
	}})
	e.Chat("fake")
	e.WaitState("ready")
	var bufs struct {
		Chat  int `msgpack:"chat"`
		Input int `msgpack:"input"`
	}
	e.Lua(`local s = require("acp")._session(); return { chat = s.chat_buf, input = s.input_buf }`, &bufs)
	for _, c := range []struct {
		buf        int
		mode, lhs  string
		wantMapped bool
	}{
		{bufs.Input, "n", "<C-t>", true},
		{bufs.Input, "n", "<CR>", false}, // replaced by <C-t>
		{bufs.Input, "i", "<C-s>", true},
		{bufs.Input, "n", "q", false}, // turned off
		{bufs.Input, "i", "<C-g>", true},
		{bufs.Chat, "n", "q", true},
		{bufs.Chat, "n", "g?", true},
		{bufs.Chat, "n", "?", false},
		{bufs.Chat, "n", "gf", true},
		{bufs.Chat, "n", "<C-]>", true},
	} {
		if got := e.bufMapDesc(c.buf, c.mode, c.lhs); (got != "") != c.wantMapped {
			t.Errorf("%s mapping of %s in buffer %d: %q, want mapped=%v", c.mode, c.lhs, c.buf, got, c.wantMapped)
		}
	}
	// The configured key sends.
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "via my key" })`, nil)
	e.input("<C-t>")
	e.Eventually("the reply", 30*time.Second, func() bool { return strings.Contains(e.ChatText(), "answered") })
	indexOrder(t, e.ChatText(), "via my key", "answered")
	// g? in the chat lists the keys in force.
	e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().chat_win)`, nil)
	e.input("g?")
	var help []string
	e.Eventually("the key help", 30*time.Second, func() bool {
		e.Lua(`local w = vim.api.nvim_get_current_win()
			if vim.api.nvim_win_get_config(w).relative == "" then return {} end
			return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false)`, &help)
		return len(help) > 0
	})
	txt := strings.Join(help, "\n")
	for _, want := range []string{"<C-t>", "send the prompt", "gf <C-]>", "g?", "<C-g>", "go to the waiting permission prompt", "allow once"} {
		if !strings.Contains(txt, want) {
			t.Fatalf("key help lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(txt, "hide the chat (the session keeps running)\n") && strings.Count(txt, "hide the chat") != 1 {
		t.Fatalf("a key turned off is listed:\n%s", txt)
	}
	e.input("q")
	var float bool
	e.Lua(`return vim.api.nvim_win_get_config(0).relative ~= ""`, &float)
	if float {
		t.Fatal("q did not close the key help")
	}
}

// A waiting permission prompt opens without focus while the user types in
// the input area; the winbar says so with the key, and that key (in insert
// mode too) goes to the prompt, whose own key answers it.
func TestPermissionKeyFromTheInputArea(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Run ls", "execute", "ls -la"), text("after")}}}, nil)
	e.Lua(`vim.o.columns = 200`, nil) // a chat wide enough for the long form
	e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`vim.api.nvim_set_current_win(require("acp")._session().input_win)
		_G.notes = {}
		vim.notify = function(msg) table.insert(_G.notes, msg) end`, nil)
	e.input("ilist the files<C-s>")
	e.WaitState("awaiting_permission")
	var where struct {
		Mode   string `msgpack:"mode"`
		Prompt bool   `msgpack:"prompt"`
		Bar    string `msgpack:"bar"`
	}
	read := func() {
		e.Lua(`local s = require("acp")._session()
			return { mode = vim.api.nvim_get_mode().mode, prompt = vim.api.nvim_get_current_win() == s.prompts:window(),
				bar = vim.api.nvim_eval_statusline(vim.wo[s.chat_win].winbar, { winid = s.chat_win, use_winbar = true }).str }`, &where)
	}
	read()
	if where.Prompt || where.Mode != "i" {
		t.Fatalf("the prompt took the focus of a user typing: %+v", where)
	}
	if !strings.Contains(where.Bar, "permission pending (<C-g>)") {
		t.Fatalf("winbar %q does not say a permission is pending", where.Bar)
	}
	// The chat is in view and says it: no notification (a long one stops
	// the user with a hit-enter prompt at 80 columns).
	var notes []string
	e.Lua(`return _G.notes`, &notes)
	for _, n := range notes {
		if strings.Contains(n, "asks permission") {
			t.Fatalf("notified although the chat shows it: %q", n)
		}
	}
	e.input("<C-g>")
	e.Eventually("focus in the prompt", 30*time.Second, func() bool {
		read()
		return where.Prompt && where.Mode == "n"
	})
	e.input("a")
	if got := waitOutcomes(e, 1); got[0] != "allow" {
		t.Fatalf("answered %q", got[0])
	}
	e.WaitState("ready")
	read()
	if strings.Contains(where.Bar, "permission pending") {
		t.Fatalf("winbar still says pending: %q", where.Bar)
	}
}
