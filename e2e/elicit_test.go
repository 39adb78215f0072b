package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// elicitStep asks the client params (elicitation/create) and waits for the answer.
func elicitStep(params M) M {
	return M{"request": "elicitation/create", "params": params}
}

// focusPrompt shows the waiting prompt focused (as :AcpPermission does).
func (e *Editor) focusPrompt() {
	e.t.Helper()
	e.Eventually("a prompt on screen", 10*time.Second, func() bool {
		var ok bool
		e.Lua(`local s = require("acp")._session(); return s.prompts:reopen()`, &ok)
		return ok && e.permPromptText() != ""
	})
}

// elicitAnswers are the client's answers to elicitation/create, in order.
func (e *Editor) elicitAnswers() []map[string]any {
	var out []map[string]any
	for _, r := range e.AgentResponses("elicitation/create") {
		res, _ := r["result"].(map[string]any)
		out = append(out, res)
	}
	return out
}

const formSchema = `{"type":"object","required":["name","size"],"properties":{
	"name":{"type":"string","title":"Name","minLength":2},
	"size":{"type":"string","title":"Size","oneOf":[{"const":"S","title":"Small","description":"one file"},{"const":"L","title":"Large"}]},
	"tags":{"type":"array","title":"Tags","items":{"anyOf":[{"const":"a","title":"Alpha"},{"const":"b","title":"Beta"}]}},
	"ratio":{"type":"number","title":"Ratio","minimum":0,"maximum":1},
	"count":{"type":"integer","title":"Count","default":2},
	"ok":{"type":"boolean","title":"Proceed","default":true},
	"note":{"type":"string","title":"Note","default":"as is"}}}`

func TestElicitationFormEveryFieldType(t *testing.T) {
	e := startEditor(t)
	// Raw params: the properties in the agent's order, not sorted.
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "elicitation/create", "raw_params": `{"sessionId":"$sessionId","mode":"form",
			"message":"How should I do it?","requestedSchema":` + formSchema + `}`},
		text("thanks"),
	}}}, nil)
	e.Lua(`vim.o.columns = 120; vim.o.lines = 50`, nil)
	e.Chat("fake")
	var caps map[string]any
	e.Eventually("initialize", 10*time.Second, func() bool {
		for _, ev := range e.AgentEvents() {
			if ev["method"] == "initialize" {
				p, _ := ev["params"].(map[string]any)
				caps, _ = p["clientCapabilities"].(map[string]any)
			}
		}
		return caps != nil
	})
	if el, _ := caps["elicitation"].(map[string]any); el["form"] == nil || el["url"] == nil {
		t.Fatalf("elicitation not advertised: %v", caps)
	}
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.focusPrompt()
	body := e.permPromptText()
	indexOrder(t, body, "fakeagent asks: How should I do it?", "1. Name *  (text)", "(empty)",
		"2. Size *  (choose one)", "Small: one file", "(choose one)", "3. Tags  (choose any)", "[ ] Alpha  [ ] Beta",
		"4. Ratio  (number 0..1)", "5. Count  (whole number)", "→ 2", "6. Proceed  (yes/no)", "[x] yes",
		"7. Note  (text)", "→ as is", "[1-7] edit field n, [<CR>] under the cursor, [e] pick one",
		"[s] send the answers", "[d] decline", "[c] cancel")
	// Sent with a required field empty: refused, the form stays and says why.
	e.keys("s")
	e.Eventually("the refusal in the form", 5*time.Second, func() bool {
		return strings.Contains(e.permPromptText(), "⚠ Name is required")
	})
	if len(e.elicitAnswers()) != 0 {
		t.Fatalf("an incomplete form was answered: %v", e.elicitAnswers())
	}
	e.keys("1")
	e.AnswerBlockingPrompt("Bo<CR>")
	e.keys("2")
	e.AnswerBlockingPrompt("2<CR>") // Large
	e.keys("3")
	e.AnswerBlockingPrompt("3<CR>") // toggles Beta (1 is Done)
	e.AnswerBlockingPrompt("1<CR>") // Done
	e.keys("4")
	e.AnswerBlockingPrompt("0.25<CR>")
	e.keys("5")
	e.AnswerBlockingPrompt("<C-u>7<CR>")
	e.keys("6") // toggles to no
	e.Eventually("the values in the form", 5*time.Second, func() bool {
		b := e.permPromptText()
		return strings.Contains(b, "→ Bo") && strings.Contains(b, "→ Large") && strings.Contains(b, "[ ] Alpha  [x] Beta") &&
			strings.Contains(b, "→ 0.25") && strings.Contains(b, "→ 7") && strings.Contains(b, "[ ] no")
	})
	e.keys("s")
	e.Eventually("the turn ends", 10*time.Second, func() bool { return e.Status().State == "ready" })
	got := e.elicitAnswers()
	if len(got) != 1 {
		t.Fatalf("answers %v", got)
	}
	b, _ := json.Marshal(got[0])
	want := `{"action":"accept","content":{"count":7,"name":"Bo","note":"as is","ok":false,"ratio":0.25,"size":"L","tags":["b"]}}`
	if string(b) != want {
		t.Fatalf("the agent got %s\nwant         %s", b, want)
	}
	indexOrder(t, e.ChatText(), "fakeagent asks a question: How should I do it?",
		"Answered: How should I do it? (Name: Bo; Size: Large; Tags: Beta; Ratio: 0.25; Count: 7; Proceed: false; Note: as is)", "thanks")
}

func TestElicitationDeclineAndCancel(t *testing.T) {
	e := startEditor(t)
	form := M{"mode": "form", "message": "Pick", "requestedSchema": M{"type": "object", "properties": M{}}}
	e.SetupFake(M{"turns": []any{[]any{elicitStep(form), elicitStep(form), elicitStep(form), M{"wait_cancel": true}}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.focusPrompt()
	e.keys("d")
	e.Eventually("the second question", 10*time.Second, func() bool { return len(e.elicitAnswers()) == 1 })
	e.focusPrompt()
	e.keys("c")
	e.Eventually("the third question", 10*time.Second, func() bool { return len(e.elicitAnswers()) == 2 })
	e.WaitState("awaiting_permission")
	// A cancelled turn answers the open question "cancel".
	e.Lua(`require("acp").cancel()`, nil)
	e.Eventually("the turn ends", 10*time.Second, func() bool { return e.Status().State == "ready" })
	var actions []string
	for _, a := range e.elicitAnswers() {
		s, _ := a["action"].(string)
		actions = append(actions, s)
	}
	if strings.Join(actions, ",") != "decline,cancel,cancel" {
		t.Fatalf("answers %v", e.elicitAnswers())
	}
	if n := e.floatCount(); n != 0 {
		t.Fatalf("%d floats left open", n)
	}
}

func TestElicitationURLOpensOnlyOnConfirm(t *testing.T) {
	e := startEditor(t)
	url := "https://login.example.com/device?code=ABCD-1234&state=" + strings.Repeat("x", 60)
	e.SetupFake(M{"turns": []any{[]any{
		elicitStep(M{"mode": "url", "message": "Sign in to continue", "elicitationId": "e1", "url": url}),
		M{"sleep_ms": 100},
		M{"notify": "elicitation/complete", "params": M{"elicitationId": "e1"}},
		text("signed in"),
	}}}, nil)
	e.Lua(`vim.o.columns = 80; vim.o.lines = 24; _G.opened = {}; vim.ui.open = function(u) table.insert(_G.opened, u) end`, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.focusPrompt()
	body := strings.ReplaceAll(e.permPromptText(), "\n", "")
	if !strings.Contains(body, url) || !strings.Contains(body, "host: login.example.com") || !strings.Contains(body, "[o] open it in the browser") {
		t.Fatalf("the link is not shown whole with its host:\n%s", e.permPromptText())
	}
	var opened []string
	e.Lua(`return _G.opened`, &opened)
	if len(opened) != 0 {
		t.Fatalf("opened before the user said so: %v", opened)
	}
	e.keys("o")
	e.Eventually("the turn ends", 10*time.Second, func() bool {
		return e.Status().State == "ready" && strings.Contains(e.ChatText(), "signed in")
	})
	e.Lua(`return _G.opened`, &opened)
	if len(opened) != 1 || opened[0] != url {
		t.Fatalf("opened %v", opened)
	}
	if a := e.elicitAnswers(); len(a) != 1 || a[0]["action"] != "accept" {
		t.Fatalf("answers %v", a)
	}
	indexOrder(t, e.ChatText(), "Opened the link: Sign in to continue", "The agent says the link's interaction is done.", "signed in")
}

// A link's interaction may end before the user answers: its question
// closes and the agent gets "cancel". An http link to another host is
// flagged.
func TestElicitationURLCompleteClosesQuestion(t *testing.T) {
	e := startEditor(t)
	gate := filepath.Join(t.TempDir(), "gate")
	e.SetupFake(M{"turns": []any{[]any{
		M{"request": "elicitation/create", "async": true,
			"params": M{"mode": "url", "message": "Sign in", "elicitationId": "e9", "url": "http://insecure.example/login"}},
		M{"wait_file": gate},
		M{"notify": "elicitation/complete", "params": M{"elicitationId": "e9"}},
		M{"wait_async": true},
		text("after"),
	}}}, nil)
	e.Chat("fake")
	e.WaitState("ready")
	e.Send("go")
	e.WaitState("awaiting_permission")
	e.focusPrompt()
	if body := e.permPromptText(); !strings.Contains(body, "⚠ not encrypted (http)") {
		t.Fatalf("prompt:\n%s", body)
	}
	if err := os.WriteFile(gate, []byte("go"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the turn ends", 10*time.Second, func() bool {
		return e.Status().State == "ready" && strings.Contains(e.ChatText(), "after")
	})
	if a := e.elicitAnswers(); len(a) != 1 || a[0]["action"] != "cancel" {
		t.Fatalf("answers %v", a)
	}
	if n := e.floatCount(); n != 0 {
		t.Fatalf("%d floats left open", n)
	}
	if !strings.Contains(e.ChatText(), "The agent says the link's interaction is done: its question is closed.") {
		t.Fatalf("chat:\n%s", e.ChatText())
	}
}

// codex-acp 2.6's ChatGPT login: authenticate asks the user to open a link
// with an elicitation scoped to the authenticate request (requestId, no
// session yet). The link is shown in the chat that is starting, opened on
// 'o', and the session starts once the agent's login is done.
func TestElicitationURLDuringLogin(t *testing.T) {
	e := startEditor(t)
	scriptPicks(e, 1)
	url := "https://auth.example.com/codex/device"
	setupAuthFake(e, M{
		"initialize": M{"authMethods": []any{M{"id": "chat-gpt", "name": "ChatGPT", "description": "Use ChatGPT to authenticate"}}},
		"auth": M{"required": true, "steps": []any{
			M{"request": "elicitation/create", "raw_params": `{"mode":"url","requestId":2,"elicitationId":"login-1",` +
				`"message":"Sign in to ChatGPT and enter this code: ABCD-1234","url":"` + url + `"}`},
			M{"notify": "elicitation/complete", "params": M{"elicitationId": "login-1"}},
		}},
	}, nil)
	e.Lua(`_G.opened = {}; vim.ui.open = function(u) table.insert(_G.opened, u) end`, nil)
	e.Chat("fake")
	e.focusPrompt()
	body := strings.ReplaceAll(e.permPromptText(), "\n", "")
	if !strings.Contains(body, url) || !strings.Contains(body, "ABCD-1234") || !strings.Contains(body, "host: auth.example.com") {
		t.Fatalf("the login link is not shown whole:\n%s", e.permPromptText())
	}
	e.keys("o")
	e.WaitState("ready")
	var opened []string
	e.Lua(`return _G.opened`, &opened)
	if len(opened) != 1 || opened[0] != url {
		t.Fatalf("opened %v", opened)
	}
	if a := e.elicitAnswers(); len(a) != 1 || a[0]["action"] != "accept" {
		t.Fatalf("answers %v", a)
	}
	if got := authRequests(e); len(got) != 1 || got[0] != "chat-gpt" {
		t.Fatalf("authenticate calls %v", got)
	}
}
