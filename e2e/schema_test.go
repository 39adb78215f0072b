package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientCaps are the clientCapabilities the fake agent was sent.
func (e *Editor) clientCaps() map[string]any {
	e.t.Helper()
	var caps map[string]any
	e.Eventually("initialize", 10*time.Second, func() bool {
		if r := e.recvs("initialize"); len(r) > 0 {
			caps, _ = r[0]["clientCapabilities"].(map[string]any)
		}
		return caps != nil
	})
	return caps
}

// Notices, compaction and plans by id show as what they are, never as
// "unsupported" placeholders; the capabilities that ask for them are sent.
func TestNoticeCompactionAndPlanUpdates(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	items := M{"sessionUpdate": "plan_update", "plan": M{"type": "items", "planId": "p1", "entries": []any{
		M{"content": "Read the code", "priority": "high", "status": "completed"},
		M{"content": "Fix the bug", "priority": "high", "status": "in_progress"},
	}}}
	e.SetupFake(M{"turns": []any{[]any{
		update(M{"sessionUpdate": "notice", "severity": "warning", "title": "MCP server unavailable", "description": "Continuing without it."}),
		update(M{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "in_progress"}),
		update(M{"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": M{"type": "text", "text": "The user fixes "}}),
		update(M{"sessionUpdate": "compaction_summary_chunk", "compactionId": "c1", "content": M{"type": "text", "text": "the parser."}}),
		update(M{"sessionUpdate": "compaction_update", "compactionId": "c1", "status": "completed"}),
		update(items),
		update(M{"sessionUpdate": "plan_update", "plan": M{"type": "markdown", "planId": "p2", "content": "## Steps\n- refactor"}}),
		M{"wait_file": gate}, // the winbar is looked at meanwhile
	}, []any{
		update(M{"sessionUpdate": "plan_removed", "planId": "p1"}),
		update(M{"sessionUpdate": "compaction_update", "compactionId": "c2", "status": "failed", "error": "too large"}),
	}}}, nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	caps := e.clientCaps()
	session, _ := caps["session"].(map[string]any)
	if session["compaction"] == nil || session["notices"] == nil || caps["plan"] == nil {
		t.Fatalf("compaction, notices and plans not all advertised: %v", caps)
	}
	if co, _ := session["configOptions"].(map[string]any); co["boolean"] == nil {
		t.Fatalf("boolean config options not advertised: %v", caps)
	}
	e.WaitState("ready")
	e.Send("go")
	e.Eventually("the plan in the winbar", 15*time.Second, func() bool {
		return strings.Contains(e.chatBar(), "plan 1/2: Fix the bug")
	})
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.WaitState("ready")
	e.Send("more")
	e.WaitState("ready")
	txt := e.ChatText()
	indexOrder(t, txt, "**Warning:** MCP server unavailable: Continuing without it.",
		"Compacting the conversation", "Conversation compacted. What the agent kept:", "The user fixes the parser.",
		"Read the code", "Fix the bug", "Plan:", "## Steps", "- refactor",
		"Plan removed.", "**Warning:** Compacting the conversation failed: too large")
	if strings.Contains(txt, "unsupported update") {
		t.Fatalf("placeholder lines:\n%s", txt)
	}
	if bar := e.chatBar(); strings.Contains(bar, "plan ") {
		t.Fatalf("a removed plan stays in the winbar: %q", bar)
	}
}

// Boolean config options are listed, toggled and shown; :AcpModel uses the
// agent's model option when it has one, session/set_model only otherwise.
func TestConfigOptionsBooleanAndModel(t *testing.T) {
	fast := func(on bool) M {
		return M{"id": "fast", "name": "Fast mode", "type": "boolean", "currentValue": on}
	}
	model := M{"id": "model", "name": "Model", "category": "model", "type": "select", "currentValue": "small",
		"options": []any{M{"value": "small", "name": "Small"}, M{"value": "big", "name": "Big"}}}
	e := startEditor(t)
	e.SetupFake(M{
		"new_session":    M{"result": M{"configOptions": []any{fast(false), model}}},
		"config_options": []any{fast(true), model},
	}, nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	var items []string
	e.Lua(`local settings = require("acp.session.settings")
		return vim.tbl_map(settings.option_text, require("acp")._session().settings.config_options)`, &items)
	if strings.Join(items, "|") != "[ ] Fast mode|Model: Small" {
		t.Fatalf(":AcpOption lists %q", items)
	}
	e.Lua(`vim.schedule(function() vim.cmd("AcpOption") end)`, nil)
	e.AnswerBlockingPrompt("1<CR>")
	e.Eventually("set_config_option", 10*time.Second, func() bool { return len(e.recvs("session/set_config_option")) == 1 })
	if p := e.recvs("session/set_config_option")[0]; p["configId"] != "fast" || p["type"] != "boolean" || p["value"] != true {
		t.Fatalf("set_config_option %v", p)
	}
	e.Eventually("the switch in the winbar", 10*time.Second, func() bool {
		bar := e.chatBar()
		return strings.Contains(bar, "✓ Fast mode") || strings.Contains(bar, "+Fast mode")
	})
	e.Lua(`vim.cmd("AcpModel big")`, nil)
	e.Eventually("the model set", 10*time.Second, func() bool { return len(e.recvs("session/set_config_option")) == 2 })
	if p := e.recvs("session/set_config_option")[1]; p["configId"] != "model" || p["value"] != "big" {
		t.Fatalf("set_config_option %v", p)
	}
	if n := len(e.recvs("session/set_model")); n != 0 {
		t.Fatalf("session/set_model sent %d times to an agent with a model option", n)
	}

	e2 := startEditor(t)
	e2.SetupFake(M{"new_session": M{"result": M{"models": M{"currentModelId": "a",
		"availableModels": []any{M{"modelId": "a", "name": "A"}, M{"modelId": "b", "name": "B"}}}}}}, nil)
	e2.Chat("fake")
	e2.WaitState("ready")
	e2.Lua(`vim.cmd("AcpModel b")`, nil)
	e2.Eventually("session/set_model", 10*time.Second, func() bool { return len(e2.recvs("session/set_model")) == 1 })
}

// fs.allow_roots go as additionalDirectories to an agent that takes them.
func TestAdditionalDirectoriesFromAllowRoots(t *testing.T) {
	for _, takes := range []bool{true, false} {
		e := startEditor(t)
		root := t.TempDir()
		caps := sessionCaps(false)
		if takes {
			caps = sessionCaps(false, "additionalDirectories")
		}
		e.SetupFake(M{"initialize": caps}, M{"fs": M{"allow_roots": []any{root}}})
		e.Chat("fake")
		e.WaitState("ready")
		dirs, ok := e.recvs("session/new")[0]["additionalDirectories"].([]any)
		if takes && (!ok || len(dirs) != 1 || strings.TrimSuffix(dirs[0].(string), "/") != root) {
			t.Fatalf("additionalDirectories %v, want [%s]", dirs, root)
		}
		if !takes && ok {
			t.Fatalf("additionalDirectories sent to an agent without the capability: %v", dirs)
		}
	}
}

// PromptResponse.usage shows in the winbar.
func TestTurnUsageInWinbar(t *testing.T) {
	e := startEditor(t)
	e.SetupFake(M{"usage": M{"totalTokens": 12345, "inputTokens": 12000, "outputTokens": 345}}, nil)
	e.Lua(`vim.o.columns = 200`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("count")
	e.WaitState("ready")
	e.Eventually("usage in the winbar", 10*time.Second, func() bool { return strings.Contains(e.chatBar(), "12k tok") })
}
