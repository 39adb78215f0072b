package host

import (
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/quirks"
)

// Whether the agent reads the disk (so unsaved buffers are offered to be
// saved before a prompt): the user's setting, else what the agent is
// known to do, else whether it read through the editor yet.
func TestReadsDisk(t *testing.T) {
	for _, c := range []struct {
		name     string
		agent    string
		override map[string]bool
		fsRead   bool
		want     bool
	}{
		{"unknown agent, no fs read yet", "some-agent", nil, false, true},
		{"unknown agent after an fs read", "some-agent", nil, true, false},
		{"codex reads the disk", "@agentclientprotocol/codex-acp", nil, true, true},
		{"gemini reads the disk even after fs reads", "gemini-cli", nil, true, true},
		{"qwen reads through the editor", "qwen-code", nil, false, false},
		{"the user says otherwise", "qwen-code", map[string]bool{quirks.ReadsDisk: true}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, s := testSession(t)
			s.opts.Quirks = c.override
			s.agent = &Agent{}
			s.agent.initResp.AgentInfo = &acp.Implementation{Name: c.agent, Version: "1.0.0"}
			s.fsReads.Store(c.fsRead)
			if got := s.readsDisk(); got != c.want {
				t.Fatalf("readsDisk = %v, want %v", got, c.want)
			}
		})
	}
}
