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

// knownQuirks are the quirks of real agents (observed: gemini-cli 0.61.0).
var knownQuirks = []agentQuirk{
	{Name: QuirkMissingFileAsEmpty, Agent: "gemini-cli"},
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
