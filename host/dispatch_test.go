package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/internal/acperr"
	"github.com/nvim-acp/nvim-acp/internal/gate"
	"github.com/nvim-acp/nvim-acp/terminal"
)

// testAgent is an agent connection's client side with session s
// registered as "s1", and no process: Agent.handle is called directly.
func testAgent(t *testing.T, s *Session) *Agent {
	t.Helper()
	a := &Agent{
		h:        s.h,
		log:      s.log,
		exited:   make(chan struct{}),
		sessions: map[acp.SessionId]*Session{"s1": s},
		gate:     gate.New(strings.NewReader(""), gate.Limit, func(int) {}),
	}
	s.agent, s.id = a, "s1"
	return a
}

// errData is rerr's data as a map ("" keys absent).
func errData(t *testing.T, rerr *acp.RequestError) map[string]any {
	t.Helper()
	m, ok := rerr.Data.(map[string]any)
	if !ok {
		t.Fatalf("error %v: data is %T, want an object", rerr, rerr.Data)
	}
	return m
}

// TestRequestsRejectBadParamsAndUnknownSessions: every request the client
// serves answers params that do not decode, and a session it does not
// know, with invalid params (-32602) before reaching a session; anything
// else is method not found (-32601).
func TestRequestsRejectBadParamsAndUnknownSessions(t *testing.T) {
	_, s := testSession(t)
	a := testAgent(t, s)
	ctx := context.Background()
	want := []string{
		acp.ClientMethodSessionRequestPermission, acp.ClientMethodFsReadTextFile, acp.ClientMethodFsWriteTextFile,
		acp.ClientMethodTerminalCreate, acp.ClientMethodTerminalOutput, acp.ClientMethodTerminalWaitForExit,
		acp.ClientMethodTerminalKill, acp.ClientMethodTerminalRelease, acpx.MethodElicitationCreate,
	}
	// MCP-over-ACP's mcp/message names a server, not a session (mcp.go):
	// bad params are invalid params, a server unknown is unavailable
	// (-33001, the binding's code).
	if len(requests) != len(want)+1 || requests["mcp/message"] == nil {
		t.Errorf("the client serves %d requests, want %d (%v and mcp/message)", len(requests), len(want)+1, want)
	}
	for params, code := range map[string]int{
		`{"serverId":["x"]}`: acperr.InvalidParams,
		`{"serverId":"nvim-nope","requestId":"1","method":"tools/list"}`: -33001,
	} {
		if _, rerr := a.handle(ctx, "mcp/message", json.RawMessage(params)); rerr == nil || rerr.Code != code {
			t.Errorf("mcp/message %s: %v, want code %d", params, rerr, code)
		}
	}
	for _, method := range want {
		if requests[method] == nil {
			t.Errorf("%s: no handler", method)
			continue
		}
		_, rerr := a.handle(ctx, method, json.RawMessage(`{"sessionId":["not","a","string"]}`))
		if rerr == nil || rerr.Code != acperr.InvalidParams {
			t.Errorf("%s with undecodable params: %v, want invalid params", method, rerr)
		}
		_, rerr = a.handle(ctx, method, json.RawMessage(`{"sessionId":"nope","path":"/x","terminalId":"t","command":"true","options":[],"toolCall":{"toolCallId":"c"}}`))
		if rerr == nil || rerr.Code != acperr.InvalidParams || !strings.Contains(rerr.Error(), `unknown session \"nope\"`) {
			t.Errorf("%s for an unknown session: %v, want invalid params naming it", method, rerr)
		}
	}
	// mcp/connect and mcp/disconnect left ACP with MCP-over-ACP's redesign.
	for _, method := range []string{"fs/delete_file", "terminal/list", "session/prompt", "_vendor/anything", "mcp/connect", "mcp/disconnect"} {
		if _, rerr := a.handle(ctx, method, json.RawMessage(`{"sessionId":"s1"}`)); rerr == nil || rerr.Code != -32601 {
			t.Errorf("%s: %v, want method not found", method, rerr)
		}
	}
}

// TestTerminalRequestsTyped: terminal/* params are validated as the SDK
// defines them, and an unknown terminal id is invalid params with the
// reason and id in the data.
func TestTerminalRequestsTyped(t *testing.T) {
	_, s := testSession(t)
	a := testAgent(t, s)
	ctx := context.Background()
	for _, method := range []string{acp.ClientMethodTerminalOutput, acp.ClientMethodTerminalWaitForExit,
		acp.ClientMethodTerminalKill, acp.ClientMethodTerminalRelease} {
		_, rerr := a.handle(ctx, method, json.RawMessage(`{"sessionId":"s1"}`))
		if rerr == nil || rerr.Code != acperr.InvalidParams || !strings.Contains(rerr.Error(), "terminalId is required") {
			t.Errorf("%s without terminalId: %v, want invalid params", method, rerr)
		}
		_, rerr = a.handle(ctx, method, json.RawMessage(`{"sessionId":"s1","terminalId":"term-9"}`))
		if rerr == nil || rerr.Code != acperr.InvalidParams {
			t.Fatalf("%s of an unknown terminal: %v, want invalid params", method, rerr)
		}
		if d := errData(t, rerr); d["reason"] != terminal.ReasonUnknownTerminal || d["terminalId"] != "term-9" || !strings.Contains(rerr.Message, "term-9") {
			t.Errorf("%s of an unknown terminal: %v, want reason %s naming term-9", method, rerr, terminal.ReasonUnknownTerminal)
		}
	}
	_, rerr := a.handle(ctx, acp.ClientMethodTerminalCreate, json.RawMessage(`{"sessionId":"s1","command":""}`))
	if rerr == nil || rerr.Code != acperr.InvalidParams || !strings.Contains(rerr.Error(), "command is required") {
		t.Errorf("terminal/create without a command: %v, want invalid params", rerr)
	}
}

// TestPermissionRequestTypedAndWhole: session/request_permission is served
// from its typed params (auto_allow picks the allow_once option by kind)
// while the UI gets the request whole, fields the SDK does not know
// included.
func TestPermissionRequestTypedAndWhole(t *testing.T) {
	h, s := testSession(t)
	s.opts.AutoAllow = []string{"read"}
	a := testAgent(t, s)
	ctx := context.Background()
	res, rerr := a.handle(ctx, acp.ClientMethodSessionRequestPermission, json.RawMessage(`{"sessionId":"s1",
		"toolCall":{"toolCallId":"c1","kind":"read","title":"Read x"},
		"options":[{"optionId":"no","name":"No","kind":"reject_once"},{"optionId":"yes-once","name":"Yes","kind":"allow_once"}]}`))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if r, ok := res.(acp.RequestPermissionResponse); !ok || r.Outcome.Selected == nil || r.Outcome.Selected.OptionId != "yes-once" {
		t.Fatalf("auto-allowed read: answered %#v, want option yes-once selected", res)
	}

	// Asked: the UI's event carries what only the raw params have.
	done := make(chan any, 1)
	go func() {
		res, _ := a.handle(ctx, acp.ClientMethodSessionRequestPermission, json.RawMessage(`{"sessionId":"s1",
			"toolCall":{"toolCallId":"c2","kind":"edit","title":"Edit y","x_vendor":{"keep":"me"}},
			"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}`))
		done <- res
	}()
	ev := pendingEvent(t, h, EventPermission)
	tc, _ := ev["request"].(map[string]any)["toolCall"].(map[string]any)
	if v, _ := tc["x_vendor"].(map[string]any); v["keep"] != "me" {
		t.Fatalf("permission event %v: the tool call's unknown fields are missing", ev)
	}
	if err := h.rpcAnswerPermission(ev["id"].(int), 1); err != nil {
		t.Fatal(err)
	}
	if r, ok := (<-done).(acp.RequestPermissionResponse); !ok || r.Outcome.Selected == nil || r.Outcome.Selected.OptionId != "ok" {
		t.Fatalf("answered ok: the agent got %#v", r)
	}
}
