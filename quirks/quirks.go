// Package quirks holds the workarounds for what some agents do, keyed to
// what the agent says it is in initialize (agentInfo.name, and a version
// range), never to the name the user gave it in the config. The user's
// setting of a quirk (agents.<name>.quirks) wins either way.
package quirks

import (
	"regexp"
	"strconv"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// Quirk names (the keys of agents.<name>.quirks).
const (
	// MissingFileAsEmpty: fs/read_text_file of a missing file answers
	// "" instead of an error. Gemini CLI reads through the client before it
	// creates a file and treats any error as fatal (DESIGN.md).
	MissingFileAsEmpty = "missing_file_as_empty"
	// ReadsDisk: the agent reads files from disk with its own tools,
	// not through fs/read_text_file, so a buffer's unsaved changes are
	// not what it sees (sending a prompt offers to save them first). An
	// agent with no known quirk counts as reading the disk until it calls
	// fs/read_text_file. Gemini CLI reads through the client only to
	// create or overwrite a file.
	ReadsDisk = "reads_disk"
	// McpHTTP: the agent drops stdio MCP servers given in session/new
	// (Copilot CLI logs "Rejecting non-http/sse MCP server"): the editor's
	// server goes over loopback HTTP.
	McpHTTP = "mcp_http"
	// McpTrust: the agent uses MCP servers only in folders it trusts
	// (gemini-cli 0.61 drops them elsewhere, unless run with --skip-trust):
	// the chat says so once.
	McpTrust = "mcp_trusted_folders"
	// ModeMarker: an agent message chunk that is only
	// "[MODE_UPDATE] <mode>" is a mode change, not text. Gemini CLI reports
	// mode changes only so (DESIGN.md); from any other agent it is text.
	ModeMarker = "mode_marker"
)

// agentQuirk turns quirk Name on for the agents whose agentInfo.name is
// Agent, at versions in [Min, Max] ("" leaves that end open).
type agentQuirk struct {
	Name, Agent, Min, Max string
}

// known are the quirks of real agents (observed: gemini-cli 0.61.0;
// Copilot CLI, as reported, issue 18).
var known = []agentQuirk{
	{Name: MissingFileAsEmpty, Agent: "gemini-cli"},
	{Name: ReadsDisk, Agent: "gemini-cli"},
	// Observed 2026-11-24: they read and write the disk with their own tools.
	{Name: ReadsDisk, Agent: "@agentclientprotocol/claude-agent-acp"},
	{Name: ReadsDisk, Agent: "@agentclientprotocol/codex-acp"},
	{Name: ReadsDisk, Agent: "codex-acp"},
	{Name: ReadsDisk, Agent: "OpenCode"},
	{Name: McpTrust, Agent: "gemini-cli"},
	{Name: McpHTTP, Agent: "Copilot"},
	{Name: ModeMarker, Agent: "gemini-cli"},
}

// On reports whether quirk name applies to the agent that says it is
// info, the user's override first.
func On(name string, info *acp.Implementation, override map[string]bool) bool {
	if on, ok := override[name]; ok {
		return on
	}
	if info == nil {
		return false
	}
	for _, q := range known {
		if q.Name == name && q.Agent == info.Name &&
			(q.Min == "" || CompareVersions(info.Version, q.Min) >= 0) &&
			(q.Max == "" || CompareVersions(info.Version, q.Max) <= 0) {
			return true
		}
	}
	return false
}

// CompareVersions compares dotted versions numerically ("0.9" < "0.10"),
// ignoring a leading "v" and anything after a "-" or "+"; a part that is
// not a number compares as 0.
func CompareVersions(a, b string) int {
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

// readsThroughEditor are the agents (agentInfo.name) known to read files
// through fs/read_text_file (observed: qwen-code 0.24, claude-code-acp
// 0.16, and the demo agent).
var readsThroughEditor = map[string]bool{"qwen-code": true, "@zed-industries/claude-code-acp": true, "nvim-acp-demo": true}

// ReadsDiskOf reports whether the agent that says it is info reads files
// from disk: the user's override, else what the agent is known to do,
// else whether it has not called fs/read_text_file yet (fsReads).
func ReadsDiskOf(info *acp.Implementation, override map[string]bool, fsReads bool) bool {
	if on, ok := override[ReadsDisk]; ok {
		return on
	}
	if On(ReadsDisk, info, nil) {
		return true
	}
	if info != nil && readsThroughEditor[info.Name] {
		return false
	}
	return !fsReads
}

// modeMarkerRE is the whole chunk of ModeMarker.
var modeMarkerRE = regexp.MustCompile(`^\s*\[MODE_UPDATE\] (\S+)\s*$`)

// MarkedMode is the mode an agent message chunk's text reports under
// ModeMarker, if it is only a mode marker.
func MarkedMode(text string) (string, bool) {
	m := modeMarkerRE.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return m[1], true
}
