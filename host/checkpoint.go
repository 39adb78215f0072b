package host

import "github.com/nvim-acp/nvim-acp/turnscan"

// checkpointChange hands a change a scan found to the session's
// checkpoints (when the chat keeps them).
func (s *Session) checkpointChange(c turnscan.Change) {}
