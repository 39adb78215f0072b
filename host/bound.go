package host

import "github.com/nvim-acp/nvim-acp/internal/eventbound"

// boundEvent makes ev fit what one event may carry to Neovim
// (internal/eventbound) and returns it with the bytes of its strings.
func boundEvent(ev Event) (Event, int) {
	return ev, eventbound.Bound(ev)
}
