package host

import (
	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/quirks"
)

// readsDisk reports whether the session's agent reads files from disk
// (quirks.ReadsDiskOf).
func (s *Session) readsDisk() bool {
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	var info *acp.Implementation
	if a != nil {
		info = a.initResp.AgentInfo
	}
	return quirks.ReadsDiskOf(info, s.opts.Quirks, s.fsReads.Load())
}

// rpcReadsDisk is acp_reads_disk(sid) (see readsDisk).
func (h *Host) rpcReadsDisk(sid int) (bool, error) {
	s, err := h.session(sid)
	if err != nil {
		return true, err
	}
	return s.readsDisk(), nil
}

// applyQuirks sets the session's workarounds for agent a (before its fs
// bridge starts, which reads them).
func (s *Session) applyQuirks(a *Agent) {
	info := a.initResp.AgentInfo
	on := func(name string) bool {
		q := quirks.On(name, info, s.opts.Quirks)
		if q {
			s.log.Info("quirk on", "quirk", name)
		}
		return q
	}
	missing := on(quirks.MissingFileAsEmpty)
	s.modeMarker.Store(on(quirks.ModeMarker))
	s.mu.Lock()
	s.opts.Fs.MissingAsEmpty = missing
	s.mu.Unlock()
}

// markedMode is the mode a chunk of kind reports under quirks.ModeMarker.
func (s *Session) markedMode(kind, text string) (string, bool) {
	if kind != "agent_message_chunk" || !s.modeMarker.Load() {
		return "", false
	}
	return quirks.MarkedMode(text)
}
