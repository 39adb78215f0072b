package e2e

import (
	"strings"
	"testing"
	"time"
)

// lastRow is the screen's last row, trimmed (the command line).
func (s *screen) lastRow() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rows) == 0 {
		return ""
	}
	return strings.TrimSpace(strings.Join(s.rows[len(s.rows)-1], ""))
}

// twoChatsOneToAsk opens two chats of the fake agent (a 100x30 UI
// attached): the first's, then the second's, whose first prompt will ask
// a permission. first is the first session's status.
func twoChatsOneToAsk(t *testing.T) (*Editor, *uiEditor, Status) {
	t.Helper()
	e := startEditor(t)
	u := attachUI(e, 100, 30)
	e.SetupFake(M{"turns": []any{[]any{permRequest("p1", "Run ls", "execute", "ls"), text("after")}}}, nil)
	first := e.Chat("fake")
	e.WaitState("ready")
	e.Lua(`vim.cmd("AcpNew fake")`, nil)
	e.Eventually("the second session ready", 30*time.Second, func() bool {
		st := e.Status()
		return st.Key != first.Key && st.State == "ready"
	})
	return e, u, first
}

// The message that a hidden session waits stays on the command line when
// the overview opens another session's chat in Insert mode: "-- INSERT --"
// does not take its place (a UI attached, as a user's terminal is).
func TestAttentionMessageOutlivesInsertMode(t *testing.T) {
	e, u, first := twoChatsOneToAsk(t)
	e.Lua(`vim.cmd("stopinsert"); require("acp").toggle(); require("acp").send("fix the parser")`, nil)
	const said = "fix the parser (fake) needs a permission · :AcpAttention"
	e.Eventually("the attention message on screen", 10*time.Second, func() bool {
		return e.Told(said) && strings.Contains(u.screen.lastRow(), said)
	})
	// The overview: the first session (its row first) opened with <CR>.
	e.Lua(`vim.cmd("AcpSessions"); vim.api.nvim_win_set_cursor(0, { 3, 0 })`, nil)
	e.input("<CR>")
	var mode struct {
		Mode string `msgpack:"mode"`
	}
	e.Eventually("the first chat open in Insert mode", 10*time.Second, func() bool {
		if err := e.nv.Call("nvim_get_mode", &mode); err != nil {
			t.Fatal(err)
		}
		return mode.Mode == "i" && e.Status().Key == first.Key
	})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(u.screen.lastRow(), said) {
		if time.Now().After(deadline) {
			t.Fatalf("the message is gone from the screen:\n%s\n:messages:\n%s", u.screen.text(), e.Messages())
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
	// Beside the mode, still there once Neovim is idle again.
	e.Lua(`return 1`, nil)
	if row := u.screen.lastRow(); !strings.HasPrefix(row, "-- INSERT --") || !strings.Contains(row, said) {
		t.Errorf("the command line: %q", row)
	}
	// Answered, the session waits no more: the message goes.
	second := first.Key + 1
	e.Lua(`require("acp").respond_permission("allow_once", { session = ... })`, nil, second)
	e.Eventually("the message gone once answered", 10*time.Second, func() bool {
		return !strings.Contains(u.screen.lastRow(), said)
	})
}

// The message shown again beside "-- INSERT --" follows the screen when it
// is resized while the user types: on the last row, right of the mode,
// whole at 80 columns, nowhere else on the screen.
func TestAttentionMessageFollowsAResize(t *testing.T) {
	e, u, _ := twoChatsOneToAsk(t)
	e.Lua(`vim.cmd("stopinsert"); require("acp").toggle()`, nil)
	e.input("i")
	e.Lua(`require("acp").send("fix the parser")`, nil)
	const said = "fix the parser (fake) needs a permission · :AcpAttention"
	onLastRowOnly := func() bool {
		if !strings.HasPrefix(u.screen.lastRow(), "-- INSERT --") || !strings.Contains(u.screen.lastRow(), said) {
			return false
		}
		return strings.Count(u.screen.text(), said) == 1
	}
	e.Eventually("the message beside the mode", 10*time.Second, onLastRowOnly)
	for _, size := range [][2]int{{200, 50}, {80, 24}, {200, 50}} {
		if err := e.nv.TryResizeUI(size[0], size[1]); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !onLastRowOnly() {
			if time.Now().After(deadline) {
				t.Fatalf("at %dx%d the message is not (only) beside the mode:\n%s", size[0], size[1], u.screen.text())
			}
			time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
		}
	}
}
