package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nvim-acp/nvim-acp/chatlog"
)

// Saved chats (lua/acp/history.lua) are written here, off Neovim's main
// loop: Lua sends what changed in the chat since its last save
// (acp_history_save, a notification: Neovim does not wait), and the saver
// applies the changes in order (chatlog) with the secrets the host knows
// masked, then writes the chat's index entry. A save's cost follows the
// change, not the chat's length.

// historySave is one save of a chat: its lines from From on are Lines.
type historySave struct {
	Path     string   `msgpack:"path"`      // the transcript
	From     int      `msgpack:"from"`      // the first line that changed (0: all)
	Lines    []string `msgpack:"lines"`     // the chat's lines from From on
	MetaPath string   `msgpack:"meta_path"` // the index entry, written after it
	Meta     string   `msgpack:"meta"`      // its JSON
}

// historyJob is a save, or a mark that flushes wait for.
type historyJob struct {
	save *historySave
	mark int
}

// saver applies the saves in the order Lua sent them.
type saver struct {
	w    *chatlog.Writer
	wake chan struct{}

	mu      sync.Mutex
	jobs    []historyJob
	marks   map[int]chan struct{} // waiters: closed once the mark is reached
	reached int                   // the last mark reached
}

func newSaver() *saver {
	return &saver{w: chatlog.New(), wake: make(chan struct{}, 1), marks: map[int]chan struct{}{}}
}

func (s *saver) add(j historyJob) {
	s.mu.Lock()
	s.jobs = append(s.jobs, j)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// mark is the channel closed once mark token is reached (marks come in
// increasing order).
func (s *saver) mark(token int) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := s.marks[token]
	if !ok {
		ch = make(chan struct{})
		if token <= s.reached {
			close(ch)
			return ch
		}
		s.marks[token] = ch
	}
	return ch
}

// reach notes that mark token was reached: its waiters, and those of the
// marks before it, go on.
func (s *saver) reach(token int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reached = max(s.reached, token)
	for t, ch := range s.marks {
		if t <= s.reached {
			close(ch)
			delete(s.marks, t)
		}
	}
}

// run applies saves until ctx ends, then what is left.
func (s *saver) run(ctx context.Context, apply func(*historySave)) {
	for {
		select {
		case <-ctx.Done():
			s.drain(apply)
			return
		case <-s.wake:
		}
		s.drain(apply)
	}
}

func (s *saver) drain(apply func(*historySave)) {
	for {
		s.mu.Lock()
		jobs := s.jobs
		s.jobs = nil
		s.mu.Unlock()
		if len(jobs) == 0 {
			return
		}
		for _, j := range jobs {
			if j.save != nil {
				apply(j.save)
				continue
			}
			s.reach(j.mark)
		}
	}
}

// rpcHistorySave queues a save (acp_history_save, a notification).
func (h *Host) rpcHistorySave(save historySave) {
	if save.Path == "" {
		return
	}
	h.saver.add(historyJob{save: &save})
}

// rpcHistoryMark queues mark token (acp_history_mark, a notification):
// rpcHistoryFlush(token) returns once the saves sent before it are done.
func (h *Host) rpcHistoryMark(token int) {
	h.saver.add(historyJob{mark: token})
}

// rpcHistoryFlush waits (up to 5 s) for the saves sent before mark token
// (acp_history_flush: Neovim exits and the chats must be on disk).
func (h *Host) rpcHistoryFlush(token int) (bool, error) {
	select {
	case <-h.saver.mark(token):
		return true, nil
	case <-time.After(5 * time.Second):
		h.saver.mu.Lock()
		delete(h.saver.marks, token) // a mark that never came
		h.saver.mu.Unlock()
		return false, nil
	}
}

// applySave writes one save; a save the transcript cannot take (a save
// before it was lost) asks Lua for the whole chat.
func (h *Host) applySave(s *historySave) {
	lines := h.secrets.Strings(s.Lines)
	err := h.saver.w.Save(s.Path, s.From, lines, 0o600)
	if errors.Is(err, chatlog.ErrBehind) {
		h.log.Warn("saved chat behind: saving it whole", "path", s.Path, "err", err)
		if err := h.nv.ExecLua(`require("acp.history").resave(...)`, nil, s.Path); err != nil {
			h.log.Warn("ask for the whole chat", "path", s.Path, "err", err)
		}
		return
	}
	if err == nil && s.MetaPath != "" {
		err = writePrivate(s.MetaPath, []byte(s.Meta))
	}
	if err != nil {
		h.log.Warn("save the chat", "path", s.Path, "err", err)
		msg := fmt.Sprintf("cannot save the chat in %s: %v", filepath.Dir(s.Path), err)
		if err := h.nv.ExecLua(`require("acp.history").failed(...)`, nil, s.Path, msg); err != nil {
			h.log.Warn("report a failed save", "path", s.Path, "err", err)
		}
	}
}

// writePrivate replaces path with data through a temp file (mode 0600)
// and a rename: a reader never sees half of it.
func writePrivate(path string, data []byte) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // a stale one (a crash) would keep its mode
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	return nil
}
