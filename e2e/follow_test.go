package e2e

import (
	"path/filepath"
	"testing"
	"time"
)

// followState is what the editing window shows and where the user is.
type followState struct {
	Path    string `msgpack:"path"`
	Line    int    `msgpack:"line"`
	InInput bool   `msgpack:"in_input"`
	Marks   int    `msgpack:"marks"`
}

func (e *Editor) followState() followState {
	e.t.Helper()
	var st followState
	e.Lua(`local win = require("acp.chat").edit_win()
		local buf = vim.api.nvim_win_get_buf(win)
		local ns = vim.api.nvim_create_namespace("acp_follow")
		return { path = vim.api.nvim_buf_get_name(buf), line = vim.api.nvim_win_get_cursor(win)[1],
			in_input = vim.b.acp_role == "input",
			marks = #vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {}) }`, &st)
	return st
}

func TestFollowTheAgent(t *testing.T) {
	e, ws := fsEditor(t)
	a := filepath.Join(ws, "a.txt")
	b := filepath.Join(ws, "b.txt")
	c := filepath.Join(ws, "c.txt")
	fsPutFile(t, a, "1\n2\n3\n4\n5\n")
	fsPutFile(t, b, "1\n2\n3\n4\n5\n6\n7\n")
	tool := func(id string, extra M) M {
		u := M{"sessionUpdate": "tool_call", "toolCallId": id, "title": "Read", "kind": "read", "status": "in_progress"}
		for k, v := range extra {
			u[k] = v
		}
		return M{"update": u}
	}
	e.Lua(`vim.cmd.edit(...)`, nil, a)
	e.SetupFake(M{"turns": []any{
		[]any{tool("t1", M{"locations": []any{M{"path": b, "line": 6}}})},
		[]any{tool("t2", M{"rawInput": M{"file_path": a, "offset": 4}})},
		[]any{tool("t3", M{"locations": []any{M{"path": b, "line": 2}}})},
		[]any{tool("t4", M{"locations": []any{M{"path": b, "line": 3}}})},
		// A file the call creates: named before it exists (the agent asks
		// first, as agents do), never again.
		[]any{
			tool("t5", M{"kind": "edit", "locations": []any{M{"path": c, "line": 2}}}),
			permRequest("t5", "Create c.txt", "edit", ""),
			fsWrite(c, "one\ntwo\nthree\n"),
			M{"update": M{"sessionUpdate": "tool_call_update", "toolCallId": "t5", "status": "completed"}},
		},
	}}, M{"follow": true})
	e.Chat("fake")
	e.WaitState("ready")
	e.runTurn("one")
	if st := e.followState(); st.Path != b || st.Line != 6 || !st.InInput || st.Marks != 1 {
		t.Fatalf("after a location: %+v, want b.txt at line 6 marked, the user still in the input", st)
	}
	e.runTurn("two")
	if st := e.followState(); st.Path != a || st.Line != 4 || !st.InInput {
		t.Fatalf("after a rawInput file_path/offset: %+v, want a.txt at line 4", st)
	}
	// The user in the editing window: it is theirs.
	e.Lua(`local s = require("acp")._session()
		vim.api.nvim_set_current_win(require("acp.chat").edit_win())
		require("acp").send("three")`, nil)
	e.Eventually("end of turn three", 30*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason != ""
	})
	if st := e.followState(); st.Path != a || st.Line != 4 {
		t.Fatalf("followed into the window the user is in: %+v", st)
	}
	// Off: nothing moves.
	e.Lua(`vim.cmd("AcpFollow off"); vim.api.nvim_set_current_win(require("acp")._session().input_win)`, nil)
	e.runTurn("four")
	if st := e.followState(); st.Path != a || st.Line != 4 {
		t.Fatalf("followed while off: %+v", st)
	}
	e.Lua(`vim.cmd("AcpFollow on")`, nil)
	e.Send("five")
	e.WaitState("awaiting_permission")
	e.nv.Input("a")
	e.Eventually("end of turn five", 30*time.Second, func() bool {
		st := e.Status()
		return st.State == "ready" && st.StopReason != ""
	})
	if st := e.followState(); st.Path != c || st.Line != 2 || !st.InInput {
		t.Fatalf("after creating a file: %+v, want c.txt at line 2", st)
	}
}
