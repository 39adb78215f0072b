package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// extmarkGroups maps 0-based rows of the chat buffer to the highlight groups on them.
func extmarkGroups(e *Editor) map[int][]string {
	var marks [][]any
	e.Lua(`local s = require("acp").status()
		local ns = vim.api.nvim_create_namespace("acp_transcript")
		return vim.api.nvim_buf_get_extmarks(s.chat_buf, ns, 0, -1, { details = true })`, &marks)
	out := map[int][]string{}
	for _, m := range marks {
		row := toInt(m[1])
		d, _ := m[3].(map[string]any)
		if g, ok := d["hl_group"].(string); ok {
			out[row] = append(out[row], g)
		}
	}
	return out
}

func toInt(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case uint64:
		return int(n)
	case int:
		return n
	case float64:
		return int(n)
	}
	return -1
}

func rowOf(t *testing.T, lines []string, prefix string) int {
	t.Helper()
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return i
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, strings.Join(lines, "\n"))
	return -1
}

func has(groups []string, g string) bool {
	for _, x := range groups {
		if x == g {
			return true
		}
	}
	return false
}

func TestEveryUpdateKindRenders(t *testing.T) {
	e := startEditor(t)
	mainGo := filepath.Join(e.Dir, "main.go")
	if err := os.WriteFile(mainGo, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	diff := M{"type": "diff", "path": mainGo, "oldText": "a\nb\n", "newText": "a\nc\n"}
	sc := M{
		"new_session": M{
			"result": M{
				"modes":  M{"currentModeId": "ask", "availableModes": []any{M{"id": "ask", "name": "Ask"}, M{"id": "code", "name": "Code"}}},
				"models": M{"currentModelId": "m1", "availableModels": []any{M{"modelId": "m1", "name": "Model One"}, M{"modelId": "m2", "name": "Model Two"}}},
			},
			"steps": []any{
				update(M{"sessionUpdate": "available_commands_update", "availableCommands": []any{
					M{"name": "review", "description": "Review code", "input": M{"hint": "file"}},
					M{"name": "rename", "description": "Rename a symbol"},
					M{"name": "test", "description": "Run tests"},
				}}),
				update(M{"sessionUpdate": "session_info_update", "title": "My Session"}),
			},
		},
		"turns": []any{[]any{
			update(M{"sessionUpdate": "user_message_chunk", "content": M{"type": "text", "text": "replayed question"}}),
			update(M{"sessionUpdate": "agent_thought_chunk", "content": M{"type": "text", "text": "thinking hard\nsecond thought line"}}),
			text("Here is code:\n```go\nfunc main() {"),
			text("\n}\n```\n"),
			update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "kind": "edit", "status": "pending"}),
			update(M{"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit main.go", "kind": "edit", "status": "pending",
				"locations": []any{M{"path": mainGo, "line": 3}}, "content": []any{diff}}),
			update(M{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
			update(M{"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "_meta": M{"x": 1}}),
			update(M{"sessionUpdate": "plan", "entries": []any{M{"content": "alpha", "priority": "high", "status": "in_progress"}}}),
			update(M{"sessionUpdate": "plan", "entries": []any{M{"content": "alpha", "priority": "high", "status": "completed"},
				M{"content": "beta", "priority": "medium", "status": "in_progress"}}}),
			update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "image", "mimeType": "image/png", "data": "AAAA"}}),
			update(M{"sessionUpdate": "agent_message_chunk", "content": M{"type": "resource_link", "uri": "file:///x.txt", "name": "x", "mimeType": "text/plain"}}),
			update(M{"sessionUpdate": "current_mode_update", "currentModeId": "code"}),
			update(M{"sessionUpdate": "mystery_update", "whatever": true}),
			update(M{"sessionUpdate": "usage_update", "used": 50000, "size": 200000, "cost": M{"amount": 0.123, "currency": "USD"}}),
			text("the end"),
		}},
	}
	e.SetupFake(sc, M{"ui": M{"icons": false}})
	e.wideChat()
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("show me everything")
	st := e.WaitState("ready")
	if st.StopReason != "end_turn" {
		t.Fatalf("turn did not complete: %+v", st)
	}
	lines := e.ChatLines()
	txt := strings.Join(lines, "\n")
	indexOrder(t, txt, "replayed question", "thinking hard", "Here is code:\n```go\nfunc main() {\n}\n```",
		"[x] Edit main.go  (edit, completed)", "main.go:3", "```diff", "-b", "+c", "**Plan**", "- [x] alpha (high)", "- [ ] beta (in progress)",
		"[image image/png]", "[resource file:///x.txt text/plain]", "[unsupported update: mystery_update]", "the end", "_stop: end_turn_")
	if n := strings.Count(txt, "Edit main.go"); n != 1 || strings.Contains(txt, "[ ] Edit  (") {
		t.Fatalf("tool call not updated in place:\n%s", txt)
	}
	if strings.Count(txt, "**Plan**") != 1 {
		t.Fatalf("plan not replaced:\n%s", txt)
	}
	groups := extmarkGroups(e)
	if row := rowOf(t, lines, "[x] Edit main.go"); !has(groups[row], "AcpToolCompleted") {
		t.Fatalf("tool line %d groups %v, want AcpToolCompleted", row, groups[row])
	}
	if row := rowOf(t, lines, "+c"); !has(groups[row], "AcpDiffAdd") {
		t.Fatalf("+c groups %v", groups[row])
	}
	if row := rowOf(t, lines, "-b"); !has(groups[row], "AcpDiffDelete") {
		t.Fatalf("-b groups %v", groups[row])
	}
	if row := rowOf(t, lines, "thinking hard"); !has(groups[row], "AcpThought") {
		t.Fatalf("thought groups %v", groups[row])
	}
	// Thoughts are folded by default in the chat window.
	var folded int
	e.Lua(`local s = require("acp")._session()
		local row
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l == "thinking hard" then row = i end
		end
		return vim.api.nvim_win_call(s.chat_win, function() return vim.fn.foldclosed(row) end)`, &folded)
	if folded <= 0 {
		t.Fatalf("thought not folded (foldclosed = %d)", folded)
	}
	// Winbar: agent, title, mode, model, state.
	// (session_info_update comes from the agent after session/new, so wait for it.)
	e.Eventually("winbar", 10*time.Second, func() bool {
		var bar string
		e.Lua(`local s = require("acp")._session(); return vim.wo[s.chat_win].winbar`, &bar)
		for _, want := range []string{"My Session", "mode: Code", "model: Model One", "plan 1/2: beta", "ctx 25%% 0.12 USD", "[ready]"} {
			if !strings.Contains(bar, want) {
				return false
			}
		}
		return true
	})
	// /command completion with descriptions and input hints.
	var items []map[string]any
	e.Lua(`return require("acp.input.complete").items(require("acp")._session(), "re")`, &items)
	if len(items) != 2 || items[0]["word"] != "/review" || items[0]["menu"] != "<file>" || items[1]["word"] != "/rename" {
		t.Fatalf("completion items %v", items)
	}
	var start int
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.input_win)
		vim.api.nvim_buf_set_lines(s.input_buf, 0, -1, false, { "please /te" })
		vim.api.nvim_win_set_cursor(s.input_win, { 1, 10 })
		return vim.fn.eval("v:lua.require'acp.input.complete'.omnifunc(1, '')")`, &start)
	if start != 7 {
		t.Fatalf("omnifunc findstart = %d, want 7", start)
	}
	// gd on the edit opens old and new side by side in diff mode.
	var diffWins []any
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.chat_win)
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:match("^%s+%+c$") then vim.api.nvim_win_set_cursor(0, { i, 0 }) end
		end
		require("acp.chat.actions").open_diff(s)
		local out = {}
		for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
			local b = vim.api.nvim_win_get_buf(w)
			out[#out + 1] = { vim.wo[w].diff, table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "|") }
		end
		vim.cmd("tabclose")
		return out`, &diffWins)
	if len(diffWins) != 2 {
		t.Fatalf("diff tab has %d windows", len(diffWins))
	}
	left, right := diffWins[0].([]any), diffWins[1].([]any)
	if left[0] != true || right[0] != true || left[1] != "a|b" || right[1] != "a|c" {
		t.Fatalf("diff windows %v %v", left, right)
	}
	// A location jumps to the file and line in the previous window.
	var where []any
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(s.chat_win)
		for i, l in ipairs(vim.api.nvim_buf_get_lines(s.chat_buf, 0, -1, false)) do
			if l:match("main%.go:3$") then vim.api.nvim_win_set_cursor(0, { i, 0 }) end
		end
		require("acp.chat.actions").activate(s)
		return { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1] }`, &where)
	if !strings.HasSuffix(where[0].(string), "main.go") || toInt(where[1]) != 3 {
		t.Fatalf("location jump went to %v", where)
	}
}

func TestModeAndModelRoundTrip(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"echo_mode": true,
		"new_session": M{"result": M{
			"modes":  M{"currentModeId": "ask", "availableModes": []any{M{"id": "ask", "name": "Ask"}, M{"id": "code", "name": "Code"}}},
			"models": M{"currentModelId": "m1", "availableModels": []any{M{"modelId": "m1", "name": "Model One"}, M{"modelId": "m2", "name": "Model Two"}}},
		}},
	}, nil)
	e.wideChat()
	e.Chat("fake")
	e.WaitState("ready")
	var modes []string
	e.Lua(`return require("acp.commands").choices("mode")`, &modes)
	if strings.Join(modes, ",") != "ask,code" {
		t.Fatalf("mode completion %v", modes)
	}
	e.Lua(`vim.cmd("AcpMode code")`, nil)
	e.Lua(`vim.cmd("AcpModel Model Two")`, nil)
	e.Eventually("mode and model in the winbar", 10*time.Second, func() bool {
		var bar string
		e.Lua(`local s = require("acp")._session(); return vim.wo[s.chat_win].winbar`, &bar)
		return strings.Contains(bar, "mode: Code") && strings.Contains(bar, "model: Model Two")
	})
	var gotMode, gotModel string
	for _, ev := range e.AgentEvents() {
		p, _ := ev["params"].(map[string]any)
		switch ev["method"] {
		case "session/set_mode":
			gotMode, _ = p["modeId"].(string)
		case "session/set_model":
			gotModel, _ = p["modelId"].(string)
		}
	}
	if gotMode != "code" || gotModel != "m2" {
		t.Fatalf("agent got set_mode %q, set_model %q", gotMode, gotModel)
	}
	// Bug: :AcpMode and :AcpModel said nothing. The chat confirms each
	// switch once the agent made it, once.
	e.Eventually("the confirmations", 10*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "Mode: Code.") && strings.Contains(txt, "Model: Model Two.")
	})
	if n := strings.Count(e.ChatText(), "Mode: Code."); n != 1 {
		t.Fatalf("mode confirmed %d times:\n%s", n, e.ChatText())
	}
}

// At 80 columns the winbar has no room for the mode and model: the
// switch is confirmed in the messages too (issue 33).
func TestModeAndModelConfirmAt80(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{
		"echo_mode": true,
		"new_session": M{"result": M{
			"modes":  M{"currentModeId": "ask", "availableModes": []any{M{"id": "ask", "name": "Ask"}, M{"id": "code", "name": "Code"}}},
			"models": M{"currentModelId": "m1", "availableModels": []any{M{"modelId": "m1", "name": "Model One"}, M{"modelId": "m2", "name": "Model Two"}}},
		}},
	}, nil)
	e.Lua(`vim.o.columns = 80`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var modes []string
	e.Lua(`return require("acp.commands").choices("mode")`, &modes)
	if strings.Join(modes, ",") != "ask,code" {
		t.Fatalf("mode completion %v", modes)
	}
	e.Lua(`vim.cmd("AcpMode code")`, nil)
	e.Lua(`vim.cmd("AcpModel Model Two")`, nil)
	// Bug: :AcpMode and :AcpModel said nothing. The chat confirms each
	// switch once the agent made it, once.
	e.Eventually("the confirmations", 10*time.Second, func() bool {
		txt := e.ChatText()
		return strings.Contains(txt, "Mode: Code.") && strings.Contains(txt, "Model: Model Two.")
	})
	// Where the command was typed too, short enough for 80 columns.
	e.Eventually("the confirmations in the messages", 10*time.Second, func() bool {
		m := e.Messages()
		return strings.Contains(m, "acp: Mode: Code.") && strings.Contains(m, "acp: Model: Model Two.")
	})
	var gotMode, gotModel string
	for _, ev := range e.AgentEvents() {
		p, _ := ev["params"].(map[string]any)
		switch ev["method"] {
		case "session/set_mode":
			gotMode, _ = p["modeId"].(string)
		case "session/set_model":
			gotModel, _ = p["modelId"].(string)
		}
	}
	if gotMode != "code" || gotModel != "m2" {
		t.Fatalf("agent got set_mode %q, set_model %q", gotMode, gotModel)
	}
	if n := strings.Count(e.ChatText(), "Mode: Code."); n != 1 {
		t.Fatalf("mode confirmed %d times:\n%s", n, e.ChatText())
	}
}
