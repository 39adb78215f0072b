package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// promptBlocks returns the content blocks of the last session/prompt the agent got.
func promptBlocks(e *Editor) []map[string]any {
	var out []map[string]any
	for _, ev := range e.AgentEvents() {
		if ev["method"] == "session/prompt" {
			out = nil
			for _, b := range ev["params"].(map[string]any)["prompt"].([]any) {
				out = append(out, b.(map[string]any))
			}
		}
	}
	return out
}

func TestAcpAddContext(t *testing.T) {
	parallel(t)
	for _, embedded := range []bool{false, true} {
		name := map[bool]string{false: "fenced", true: "embedded"}[embedded]
		t.Run(name, func(t *testing.T) {
			e := startEditor(t)
			code := filepath.Join(e.Dir, "main.go")
			other := filepath.Join(e.Dir, "notes.txt")
			if err := os.WriteFile(code, []byte("package main\n\nfunc main() {\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(other, []byte("notes\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.SetupFake(M{
				"initialize": M{"agentCapabilities": M{"promptCapabilities": M{"embeddedContext": embedded}}},
				"turns":      []any{[]any{text("ok")}},
			}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Lua(`local s = require("acp")._session()
				vim.cmd("wincmd t")
				vim.cmd("edit main.go")
				vim.cmd("3,4AcpAdd")
				vim.cmd("AcpAdd notes.txt")
				return true`, nil)
			var bar string
			e.Lua(`local s = require("acp")._session(); return vim.wo[s.input_win].winbar`, &bar)
			if bar != "context: main.go:3-4, notes.txt" {
				t.Fatalf("input winbar %q", bar)
			}
			e.Send("explain")
			e.WaitState("ready")
			blocks := promptBlocks(e)
			if len(blocks) != 3 || blocks[0]["text"] != "explain" {
				t.Fatalf("prompt blocks %v", blocks)
			}
			if embedded {
				res, _ := blocks[1]["resource"].(map[string]any)
				if blocks[1]["type"] != "resource" || res["text"] != "func main() {\n}\n" || !strings.HasSuffix(res["uri"].(string), "main.go#L3-L4") {
					t.Fatalf("range block %v", blocks[1])
				}
			} else if blocks[1]["type"] != "text" || blocks[1]["text"] != "```go main.go:3-4\nfunc main() {\n}\n```" {
				t.Fatalf("range block %v", blocks[1])
			}
			if blocks[2]["type"] != "resource_link" || blocks[2]["uri"] != "file://"+other || blocks[2]["name"] != "notes.txt" {
				t.Fatalf("file block %v", blocks[2])
			}
			indexOrder(t, e.ChatText(), "explain", "Context: main.go:3-4, notes.txt", "ok")
			// The current buffer without a range: embedded as the user sees it
			// (unsaved edits included) when the agent takes embedded context.
			e.Lua(`vim.cmd("wincmd t"); vim.cmd("edit main.go")
				vim.api.nvim_buf_set_lines(0, 0, 1, false, { "package edited" })
				vim.cmd("AcpAdd")`, nil)
			e.Send("and this")
			e.WaitState("ready")
			whole := promptBlocks(e)
			if embedded {
				res, _ := whole[1]["resource"].(map[string]any)
				if whole[1]["type"] != "resource" || !strings.HasPrefix(res["text"].(string), "package edited\n") {
					t.Fatalf("whole-buffer block %v", whole[1])
				}
			} else if whole[1]["type"] != "resource_link" {
				t.Fatalf("whole-buffer block %v", whole[1])
			}
			// Context goes with one prompt only.
			e.Lua(`local s = require("acp")._session(); return vim.wo[s.input_win].winbar`, &bar)
			if bar != "" {
				t.Fatalf("input winbar after send %q", bar)
			}
		})
	}
}

// @path in a prompt sends that file as context; @ completes file names.
func TestMentionsAreContext(t *testing.T) {
	e := startEditor(t)
	if err := os.MkdirAll(filepath.Join(e.Dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	guide := filepath.Join(e.Dir, "docs", "guide.md")
	if err := os.WriteFile(guide, []byte("# Guide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.SetupFake(M{
		"initialize": M{"agentCapabilities": M{"promptCapabilities": M{"embeddedContext": true}}},
		"turns":      []any{[]any{text("read it")}},
	}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var items []map[string]any
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "see @docs/gu" })
		vim.api.nvim_win_set_cursor(s.input_win, { 1, 12 })
		local c = require("acp.input.complete")
		local start = c.omnifunc(1, "")
		return c.omnifunc(0, ("see @docs/gu"):sub(start + 1))`, &items)
	if len(items) != 1 || items[0]["word"] != "docs/guide.md" {
		t.Fatalf("@ completion items %v", items)
	}
	e.Send("explain @docs/guide.md, please")
	e.WaitState("ready")
	blocks := promptBlocks(e)
	if len(blocks) != 2 {
		t.Fatalf("prompt blocks %v", blocks)
	}
	res, _ := blocks[1]["resource"].(map[string]any)
	if blocks[1]["type"] != "resource" || res["text"] != "# Guide\n" || !strings.HasSuffix(res["uri"].(string), "docs/guide.md") {
		t.Fatalf("mention block %v", blocks[1])
	}
	indexOrder(t, e.ChatText(), "explain @docs/guide.md, please", "Context: docs/guide.md", "read it")
}
