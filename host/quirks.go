package host

import (
	"regexp"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// Quirks are workarounds for what some agents do, keyed to what the agent
// says it is in initialize (agentInfo.name, and a version range), never to
// the name the user gave it in the config. The user's setting of a quirk
// (agents.<name>.quirks, sent as SessionOptions.Quirks) wins either way.

// Quirk names (the keys of agents.<name>.quirks).
const (
	// QuirkMissingFileAsEmpty: fs/read_text_file of a missing file answers
	// "" instead of an error. Gemini CLI reads through the client before it
	// creates a file and treats any error as fatal (DESIGN.md).
	QuirkMissingFileAsEmpty = "missing_file_as_empty"
	// QuirkReadsDisk: the agent reads files from disk with its own tools,
	// not through fs/read_text_file, so a buffer's unsaved changes are
	// not what it sees (sending a prompt offers to save them first). An
	// agent with no known quirk counts as reading the disk until it calls
	// fs/read_text_file. Gemini CLI reads through the client only to
	// create or overwrite a file.
	QuirkReadsDisk = "reads_disk"
	// QuirkMcpHTTP: the agent drops stdio MCP servers given in session/new
	// (Copilot CLI logs "Rejecting non-http/sse MCP server"): the editor's
	// server goes over loopback HTTP.
	QuirkMcpHTTP = "mcp_http"
	// QuirkMcpTrust: the agent uses MCP servers only in folders it trusts
	// (gemini-cli 0.61 drops them elsewhere, unless run with --skip-trust):
	// the chat says so once.
	QuirkMcpTrust = "mcp_trusted_folders"
	// QuirkModeMarker: an agent message chunk that is only
	// "[MODE_UPDATE] <mode>" is a mode change, not text. Gemini CLI reports
	// mode changes only so (DESIGN.md); from any other agent it is text.
	QuirkModeMarker = "mode_marker"
)

// agentQuirk turns quirk Name on for the agents whose agentInfo.name is
// Agent, at versions in [Min, Max] ("" leaves that end open).
type agentQuirk struct {
	Name, Agent, Min, Max string
}

// knownQuirks are the quirks of real agents (observed: gemini-cli 0.61.0;
// Copilot CLI, as reported, issue 18).
var knownQuirks = []agentQuirk{
	{Name: QuirkMissingFileAsEmpty, Agent: "gemini-cli"},
	{Name: QuirkReadsDisk, Agent: "gemini-cli"},
	// Observed 2026-11-24: they read and write the disk with their own tools.
	{Name: QuirkReadsDisk, Agent: "@agentclientprotocol/claude-agent-acp"},
	{Name: QuirkReadsDisk, Agent: "@agentclientprotocol/codex-acp"},
	{Name: QuirkReadsDisk, Agent: "codex-acp"},
	{Name: QuirkReadsDisk, Agent: "OpenCode"},
	{Name: QuirkMcpTrust, Agent: "gemini-cli"},
	{Name: QuirkMcpHTTP, Agent: "Copilot"},
	{Name: QuirkModeMarker, Agent: "gemini-cli"},
}

// quirkOn reports whether quirk name applies to the agent that says it is
// info, the user's override first.
func quirkOn(name string, info *acp.Implementation, override map[string]bool) bool {
	if on, ok := override[name]; ok {
		return on
	}
	if info == nil {
		return false
	}
	for _, q := range knownQuirks {
		if q.Name == name && q.Agent == info.Name &&
			(q.Min == "" || compareVersions(info.Version, q.Min) >= 0) &&
			(q.Max == "" || compareVersions(info.Version, q.Max) <= 0) {
			return true
		}
	}
	return false
}

// compareVersions compares dotted versions numerically ("0.9" < "0.10"),
// ignoring a leading "v" and anything after a "-" or "+"; a part that is
// not a number compares as 0.
func compareVersions(a, b string) int {
	parts := func(v string) []int {
		v = strings.TrimPrefix(v, "v")
		if i := strings.IndexAny(v, "-+"); i >= 0 {
			v = v[:i]
		}
		var out []int
		for _, p := range strings.Split(v, ".") {
			n, _ := strconv.Atoi(p)
			out = append(out, n)
		}
		return out
	}
	pa, pb := parts(a), parts(b)
	for i := 0; i < len(pa) || i < len(pb); i++ {
		x, y := 0, 0
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// readsDisk reports whether the session's agent reads files from disk
// (QuirkReadsDisk, or it never called fs/read_text_file in this session).
func (s *Session) readsDisk() bool {
	s.mu.Lock()
	a := s.agent
	s.mu.Unlock()
	var info *acp.Implementation
	if a != nil {
		info = a.initResp.AgentInfo
	}
	if on, ok := s.opts.Quirks[QuirkReadsDisk]; ok {
		return on
	}
	if quirkOn(QuirkReadsDisk, info, nil) {
		return true
	}
	if info != nil && readsThroughEditor[info.Name] {
		return false
	}
	return !s.fsReads.Load()
}

// readsThroughEditor are the agents (agentInfo.name) known to read files
// through fs/read_text_file (observed: qwen-code 0.24, claude-code-acp
// 0.16, and the demo agent).
var readsThroughEditor = map[string]bool{"qwen-code": true, "@zed-industries/claude-code-acp": true, "nvim-acp-demo": true}

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
		q := quirkOn(name, info, s.opts.Quirks)
		if q {
			s.log.Info("quirk on", "quirk", name)
		}
		return q
	}
	missing := on(QuirkMissingFileAsEmpty)
	s.modeMarker.Store(on(QuirkModeMarker))
	s.mu.Lock()
	s.opts.Fs.MissingAsEmpty = missing
	s.mu.Unlock()
}

// modeMarkerRE is the whole chunk of QuirkModeMarker.
var modeMarkerRE = regexp.MustCompile(`^\s*\[MODE_UPDATE\] (\S+)\s*$`)

// markedMode is the mode a chunk of kind reports under QuirkModeMarker.
func (s *Session) markedMode(kind, text string) (string, bool) {
	if kind != "agent_message_chunk" || !s.modeMarker.Load() {
		return "", false
	}
	m := modeMarkerRE.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}
