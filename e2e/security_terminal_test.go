package e2e

import "time"

// allowCommands is the setup of tests about terminals rather than consent:
// auto_allow "execute", the user's explicit opt-in to run commands unasked.
var allowCommands = M{"permissions": M{"auto_allow": []string{"execute"}}}

// answerUntilTurnEnd answers every permission prompt of the turn with what
// choose says for its text, until the turn ends.
func answerUntilTurnEnd(e *Editor, choose func(prompt string) string) {
	e.t.Helper()
	e.Eventually("end of turn", 30*time.Second, func() bool {
		st := e.Status()
		if st.State == "awaiting_permission" {
			if p := promptText(e); p != "" {
				e.Lua(`return require("acp").respond_permission(...)`, nil, choose(p))
			}
		}
		return st.State == "ready" && st.StopReason == "end_turn"
	})
}
