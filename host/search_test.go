package host

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/chatsearch"
)

// searchEvents are the history_search events queued for Lua so far.
func searchEvents(h *Host) []Event {
	h.ui.mu.Lock()
	defer h.ui.mu.Unlock()
	var out []Event
	for _, ev := range h.ui.events {
		if ev["type"] == EventHistorySearch {
			out = append(out, ev)
		}
	}
	return out
}

// waitSearchDone waits for the done event of request.
func waitSearchDone(t *testing.T, h *Host, request int) Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, ev := range searchEvents(h) {
			if ev["request"] == request && ev["done"] == true {
				return ev
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("search %d never ended: %v", request, searchEvents(h))
	return nil
}

// TestHistorySearchRPC: a search streams each chat's hits then its end,
// as sid-less events; a new search stops the one before, whose end comes
// before the new one's first hits; acp_history_search_cancel stops one.
func TestHistorySearchRPC(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj-123")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		id := fmt.Sprintf("c%03d", i)
		if err := os.WriteFile(filepath.Join(dir, id+".txt"), []byte("## You\nfind the needle "+id), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id+".meta.json"), []byte(`{"id":"`+id+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	for _, req := range []int{1, 2} {
		if ok, err := h.rpcHistorySearch(searchQuery{Request: req, Root: root, Query: "needle"}); !ok || err != nil {
			t.Fatalf("search %d: %v %v", req, ok, err)
		}
	}
	end := waitSearchDone(t, h, 2)
	if end["hits"] != 300 || end["chats"] != 300 || end["error"] != nil {
		t.Fatalf("end of search 2: %v", end)
	}
	var order []int
	hits := 0
	for _, ev := range searchEvents(h) {
		if _, ok := ev["sid"]; ok {
			t.Fatalf("a search event with a sid: %v", ev)
		}
		order = append(order, ev["request"].(int))
		if c, ok := ev["chat"].(*chatsearch.Chat); ok && ev["request"] == 2 {
			hits += len(c.Hits)
			if c.Meta["id"] == nil || c.Hits[0].Line != 2 || c.Hits[0].Who != "You" {
				t.Fatalf("chat %+v", c)
			}
		}
	}
	if hits != 300 {
		t.Fatalf("search 2 sent %d hits", hits)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Fatalf("an event of search 1 after search 2's: %v", order)
		}
	}
	// Cancel: the end says so (or the search was done by then).
	if _, err := h.rpcHistorySearch(searchQuery{Request: 3, Root: root, Query: "needle"}); err != nil {
		t.Fatal(err)
	}
	h.rpcHistorySearchCancel(3)
	if end := waitSearchDone(t, h, 3); end["cancelled"] != true && end["hits"] != 300 {
		t.Fatalf("end of a cancelled search: %v", end)
	}
	// Shutdown stops a search and waits for it.
	if _, err := h.rpcHistorySearch(searchQuery{Request: 5, Root: root, Query: "needle"}); err != nil {
		t.Fatal(err)
	}
	h.stopSearch()
	select {
	case <-h.search.done:
	default:
		t.Fatal("the search goes on after stopSearch")
	}
	// Bad input: an empty query ends with an error, nothing crashes.
	if _, err := h.rpcHistorySearch(searchQuery{Request: 4, Root: root, Query: " "}); err != nil {
		t.Fatal(err)
	}
	if end := waitSearchDone(t, h, 4); end["error"] == nil {
		t.Fatalf("empty query: %v", end)
	}
}
