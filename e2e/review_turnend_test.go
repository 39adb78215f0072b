package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The user keeps and rejects the agent's changes of a file no buffer
// holds (written through the client, then on disk, as by a command the
// agent ran) right after the turn's end, while its end scan (git status, held
// by a git that waits on a gate) has not yet looked at the files: the
// decisions stand once the scan has run, as when taken after it. The scan
// takes the file's text from before the user's reject as the turn's last
// (the reject is the user's write), and the review, which saw the reject
// written, is not told that text again as the agent's: the rejected hunk
// stays rejected, the file as the reject wrote it.
func TestReviewDecisionAsTheTurnEnds(t *testing.T) {
	parallel(t)
	gate := gitStatusGate(t)
	e, ws := fsEditor(t)
	gitWorkspace(t, ws, map[string]string{"f.txt": "a\nb\nc\nd\ne\n"})
	p := filepath.Join(ws, "f.txt")
	e.SetupFake(M{"turns": []any{[]any{
		permRequest("c1", "Edit f.txt", "edit", ""),
		fsWrite(p, "a\nb\nC (agent)\nd\ne\n"),
		diskWrite(p, "a\nb\nC (agent)\nd\nE (agent)\n"), // a command's, say
		text("done"),
	}}}, nil)
	e.turnEndsWithScanHeld(gate)
	e.Eventually("two pending hunks", 10*time.Second, func() bool { return e.pendingHunks(p) == 2 })
	var failed string
	e.Lua(`local p = ...
		local review = require("acp.review")
		local _, err = review.decide(p, "keep", 2)
		if not err then
			_, err = review.decide(p, "reject", 4)
		end
		return err or ""`, &failed, p)
	if failed != "" {
		t.Fatalf("deciding: %s", failed)
	}
	const decided = "a\nb\nC (agent)\nd\ne\n"
	if got := fsGetFile(t, p); got != decided {
		t.Fatalf("f.txt = %q after the decisions, want %q", got, decided)
	}
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	e.Eventually("the turn's end scan done", 30*time.Second, func() bool {
		var pending bool
		// A path outside the workspace: nothing is frozen.
		e.Lua(`return require("acp.host").request("acp_will_write", "/")`, &pending)
		return !pending
	})
	var hunks int
	e.Lua(`local n = 0
		for _, f in ipairs(require("acp.host").request("acp_review_list", require("acp")._session().sid) or {}) do
			n = n + #(f.hunks or {})
		end
		return n`, &hunks)
	if hunks != 0 {
		t.Errorf("%d hunks pending after the end scan, want none (the rejected one came back)", hunks)
	}
	if got := fsGetFile(t, p); got != decided {
		t.Errorf("f.txt = %q after the end scan, want %q", got, decided)
	}
}
