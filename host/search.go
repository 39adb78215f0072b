package host

import (
	"context"
	"errors"
	"sync"

	"github.com/nvim-acp/nvim-acp/chatsearch"
)

// Full-text search of the saved chats (chatsearch), off Neovim's main
// loop: acp_history_search starts one and returns at once; each chat's
// hits come to Lua as a history_search event as soon as that chat is
// read, and a last event says the search is done. A new search (or
// acp_history_search_cancel) stops the one before.

// historySearch is the search running, if any.
type historySearch struct {
	mu      sync.Mutex
	request int
	cancel  context.CancelFunc
	done    chan struct{}
}

// searchQuery is what Lua asks for.
type searchQuery struct {
	Request int      `msgpack:"request"`
	Root    string   `msgpack:"root"`  // stdpath("data")/acp/history
	Query   string   `msgpack:"query"` // a literal text (smart case)
	Dirs    []string `msgpack:"dirs"`  // project directories under Root; none: all
}

// rpcHistorySearch starts search q (acp_history_search), stopping the
// one before; its results are history_search events.
func (h *Host) rpcHistorySearch(q searchQuery) (bool, error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.search.mu.Lock()
	prevCancel, prevDone := h.search.cancel, h.search.done
	h.search.request, h.search.cancel, h.search.done = q.Request, cancel, done
	h.search.mu.Unlock()
	if prevCancel != nil {
		prevCancel()
		<-prevDone // its last event before ours
	}
	go func() {
		defer close(done)
		defer cancel()
		sum, err := chatsearch.Search(ctx, q.Root, q.Query, chatsearch.Options{Dirs: q.Dirs}, func(c chatsearch.Chat) {
			h.ui.Emit(historySearchEvent(q.Request, &c, nil, nil))
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			h.log.Warn("search the saved chats", "query", q.Query, "err", err)
		}
		h.ui.Emit(historySearchEvent(q.Request, nil, &sum, err))
	}()
	return true, nil
}

// rpcHistorySearchCancel stops search request if it is the one running.
func (h *Host) rpcHistorySearchCancel(request int) {
	h.search.mu.Lock()
	defer h.search.mu.Unlock()
	if h.search.request == request && h.search.cancel != nil {
		h.search.cancel()
	}
}

// stopSearch stops the search running, if any, and waits for its end
// (Shutdown).
func (h *Host) stopSearch() {
	h.search.mu.Lock()
	cancel, done := h.search.cancel, h.search.done
	h.search.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
