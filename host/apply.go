package host

import (
	"context"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/fsbridge"
)

// rpcApply applies content (a code block of the chat, placed by Lua in the
// file's current text) to path through the same path as the agent's
// writes: the review diff first, then one undo step in a loaded buffer (or
// an atomic write), so the user's apply behaves like an agent's edit. The
// outcome is a message in the chat.
func (h *Host) rpcApply(sid int, path, content string) error {
	s, err := h.session(sid)
	if err != nil {
		return err
	}
	go s.apply(path, content)
	return nil
}

func (s *Session) apply(path, content string) {
	ctx, cancel := context.WithCancel(context.Background())
	s.onEnd(cancel)
	defer cancel()
	b, err := s.bridge(ctx)
	if err != nil {
		s.emit(messageEvent("error", fmt.Sprintf("cannot apply the code block: %v", err)))
		return
	}
	s.mu.Lock()
	id := s.id
	s.mu.Unlock()
	ctx = fsbridge.WithProposal(context.WithValue(ctx, fsOpKey{}, "write"), "Apply the code block to "+path+"?")
	if _, err := b.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: id, Path: path, Content: content}); err != nil {
		s.emit(messageEvent("warn", fmt.Sprintf("The code block was not applied: %v", err)))
		return
	}
	s.emit(messageEvent("info", "Applied the code block to "+path+"."))
}
