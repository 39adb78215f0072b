package fsbridge

import (
	"context"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// A proposal (a code block the user applies from the chat) is always
// reviewed first, under its own title, and replaces the text as it is now:
// nothing is merged with what the agent read before, even when the file
// changed since.
func TestProposalIsReviewedAndNotMerged(t *testing.T) {
	for _, accept := range []bool{true, false} {
		e := newEnv(t, nil) // fs.write = "apply": the agent's writes are not reviewed
		p := e.file("f.txt", "a\nb\nc\n")
		if _, err := e.read(p, nil, nil); err != nil { // the agent's base
			t.Fatal(err)
		}
		e.file("f.txt", "A\nb\nc\n") // changed since the agent read it
		e.ask.answer = answer(OptReject)
		if accept {
			e.ask.answer = answer(OptAccept)
		}
		ctx := WithProposal(context.Background(), "Apply the code block to f.txt?")
		_, err := e.b.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: "s", Path: p, Content: "A\nb\nNEW\n"})
		qs := e.ask.questions()
		if len(qs) != 1 || qs[0].Kind != KindReview || qs[0].Title != "Apply the code block to f.txt?" ||
			qs[0].Old != "A\nb\nc\n" || !strings.Contains(strings.Join(qs[0].Body, "\n"), "-c\n+NEW") {
			t.Fatalf("questions %+v", qs)
		}
		if accept {
			if err != nil || e.disk(p) != "A\nb\nNEW\n" {
				t.Fatalf("accepted: %v, disk %q", err, e.disk(p))
			}
		} else {
			wantErr(t, err, CodeInternal, ReasonDeclined, p, "declined")
			if e.disk(p) != "A\nb\nc\n" {
				t.Fatal("a rejected proposal was written")
			}
		}
	}
}
