package host

import (
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/nvim-acp/nvim-acp/internal/scrub"
	"github.com/nvim-acp/nvim-acp/transport"
)

// The last stderr lines the chat shows when a start takes long
// (acp_stderr) have the keys typed at a login masked, as the log and every
// event have: an agent echoing its key while it hangs in session/new no
// longer puts it in the chat (issue 21 item 11).
func TestStderrRPCMasksSecrets(t *testing.T) {
	const secret = "sk-typed-at-the-prompt-5c2e9a"
	secrets := scrub.New()
	secrets.Add(secret)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := New(nil, discard, secrets)
	p, err := transport.Start(transport.Command{
		Name: "echo", Env: os.Environ(), Log: discard, Report: func(string) {},
		Argv: []string{"sh", "-c", "echo starting with KEY=" + secret + " >&2; echo waiting for the server >&2; exec cat"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	h.sessions[1] = &Session{agent: &Agent{proc: p}}
	want := "starting with KEY=" + scrub.Mask + "\nwaiting for the server"
	var got string
	waitFor(t, func() bool {
		got, err = h.rpcStderr(1)
		return err != nil || got == want
	})
	if err != nil || got != want {
		t.Fatalf("acp_stderr = %q, %v; want %q", got, err, want)
	}
}
