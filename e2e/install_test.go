package e2e

import (
	"strings"
	"testing"
)

// Bug: under lazy.nvim with the Neovim scripts/install-nvim unpacks, every
// :AcpChat printed a stack trace from the markdown ftplugin (0.11+ starts
// tree-sitter there without a check) when the runtimepath had lost the
// markdown parser. The chat opens, its input still markdown, without an
// error.
func TestChatWithoutMarkdownParser(t *testing.T) {
	e := startEditor(t)
	var lost int
	e.Lua(`local n = 0
		for _, p in ipairs(vim.api.nvim_get_runtime_file("parser", true)) do
			vim.opt.rtp:remove(vim.fs.dirname(p)); n = n + 1
		end
		return n`, &lost)
	var has bool
	e.Lua(`pcall(vim.treesitter.language.add, "markdown"); return (pcall(vim.treesitter.language.inspect, "markdown"))`, &has)
	if has {
		t.Skip("the markdown parser is still found (built into this Neovim?)")
	}
	e.SetupFake(M{"turns": []any{[]any{text("tidied")}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var ft string
	e.Lua(`return vim.bo[require("acp")._session().input_buf].filetype`, &ft)
	if ft != "markdown" {
		t.Fatalf("the input's filetype is %q, want markdown", ft)
	}
	if m := e.Messages(); strings.Contains(m, "E5113") || strings.Contains(m, "Parser could not be created") {
		t.Fatalf("opening the chat without the markdown parser printed an error:\n%s", m)
	}
	e.runTurn("tidy up")
	if !strings.Contains(e.ChatText(), "tidied") {
		t.Fatalf("the turn did not show:\n%s", e.ChatText())
	}
}
