package host

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/internal/acpschema"
)

// baselineUpdates are the session/update kinds of ACP v1 that need no
// client capability: the chat renders them whatever it advertises.
var baselineUpdates = []string{
	"agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update", "plan",
	"available_commands_update", "current_mode_update", "config_option_update", "session_info_update", "usage_update",
}

// unadvertisedRequests are the agent's requests the client serves that no
// client capability announces, and why.
var unadvertisedRequests = map[string]string{
	acp.ClientMethodSessionRequestPermission: "every ACP client answers it (baseline v1)",
	editormcp.MethodMessage:                  "MCP-over-ACP: the agent's mcpCapabilities.acp and the {type acp} server the client declares in session/new announce it",
}

// unadvertisedNotifications are the agent's notifications the client
// takes that no client capability announces, and why.
var unadvertisedNotifications = map[string]string{
	acpx.MethodAuthStatusUpdate: "the agent's own auth.status capability announces it (v1 unstable): no client one exists",
	acpx.MethodClaudeAuthStatusUpdate: "claude-agent-acp's extension, announced by its own _meta.authStatus and sent " +
		"unconditionally: no client capability exists",
}

// sources is the text of the host's and the plugin's source files (no
// tests, not this table's own file): where a capability's handledBy must
// occur.
func sources(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, root := range []string{".", "../lua"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "capabilities.go" ||
				!(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".lua")) {
				return nil
			}
			text, err := os.ReadFile(path)
			b.Write(text)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// Every capability advertised is paired with the code that handles what
// it lets the agent send, and nothing the client handles is left
// unadvertised: the requests it serves, the notifications it takes, the
// update kinds it renders.
func TestCapabilitiesPairedWithHandlers(t *testing.T) {
	src := sources(t)
	claimedReq, claimedNote, claimedUpd := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range clientCapabilities {
		if len(c.requests)+len(c.notifications)+len(c.updates) == 0 && c.handledBy == "" {
			t.Errorf("%s is advertised with nothing handling it", c.path)
		}
		for _, m := range c.requests {
			claimedReq[m] = true
			if requests[m] == nil {
				t.Errorf("%s is advertised, but the client serves no %s request", c.path, m)
			}
		}
		for _, m := range c.notifications {
			claimedNote[m] = true
			if notifications[m] == nil {
				t.Errorf("%s is advertised, but the client takes no %s notification", c.path, m)
			}
		}
		for _, k := range c.updates {
			claimedUpd[k] = true
			if !knownUpdates[k] {
				t.Errorf("%s is advertised, but the host drops %s updates (knownUpdates)", c.path, k)
			}
			if !regexp.MustCompile(`handlers\.` + regexp.QuoteMeta(k) + `\s*[(=]`).MatchString(src) {
				t.Errorf("%s is advertised, but no Lua handler renders %s updates (handlers.%s)", c.path, k, k)
			}
		}
		if c.handledBy != "" && !strings.Contains(src, c.handledBy) {
			t.Errorf("%s is advertised as handled by %q, which the sources do not have", c.path, c.handledBy)
		}
	}
	for m := range requests {
		if !claimedReq[m] && unadvertisedRequests[m] == "" {
			t.Errorf("the client serves %s, which no capability advertises", m)
		}
	}
	for m := range notifications {
		if !claimedNote[m] && unadvertisedNotifications[m] == "" {
			t.Errorf("the client takes %s notifications, which no capability advertises", m)
		}
	}
	for _, k := range baselineUpdates {
		claimedUpd[k] = true
	}
	for k := range knownUpdates {
		if !claimedUpd[k] {
			t.Errorf("the chat renders %s updates, which no capability advertises", k)
		}
	}
}

// leaves are the dotted paths of m's leaves (an empty object is a leaf).
func leaves(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, leaves(p, sub)...)
			continue
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// initialize sends exactly the table, and each capability is one ACP's
// schema has (v1, as the SDK pinned for the schema check ships it; _meta
// ones are the client's own).
func TestCapabilitiesAsSentAndInSchema(t *testing.T) {
	caps := (&Host{}).capabilities()
	got := leaves("", caps)
	var want []string
	for _, c := range clientCapabilities {
		want = append(want, c.path)
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("initialize advertises %v, the table %v", got, want)
	}
	b, _ := json.Marshal(caps)
	if !strings.Contains(string(b), `"session":{"compaction":{},"configOptions":{"boolean":{}},"notices":{}}`) {
		t.Errorf("session capabilities %s", b)
	}
	c, err := acpschema.Load(acpschema.SDKDir())
	if err != nil {
		if os.Getenv("NVIM_ACP_SCHEMA_CHECK") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, p := range got {
		if strings.HasPrefix(p, "_meta.") {
			continue
		}
		if !c.Defines(1, "ClientCapabilities", strings.Split(p, ".")...) {
			t.Errorf("%s is not a client capability of ACP's schema v1", p)
		}
	}
	if c.Defines(1, "ClientCapabilities", "session", "frobnicate") {
		t.Fatal("Defines finds what the schema does not have")
	}
}

// ACP v2's table: each row paired with its handler as v1's are, each a
// client capability of v2's schema, none of them fs or terminal (v2 has
// none: the editor's MCP server serves reads, writes and commands); v2's
// baseline updates are each translated into what the chat renders.
func TestCapabilitiesV2(t *testing.T) {
	src := sources(t)
	for _, c := range clientCapabilitiesV2 {
		if len(c.requests)+len(c.notifications)+len(c.updates) == 0 && c.handledBy == "" {
			t.Errorf("v2: %s is advertised with nothing handling it", c.path)
		}
		for _, m := range c.requests {
			if requests[m] == nil {
				t.Errorf("v2: %s is advertised, but the client serves no %s request", c.path, m)
			}
		}
		for _, m := range c.notifications {
			if notifications[m] == nil {
				t.Errorf("v2: %s is advertised, but the client takes no %s notification", c.path, m)
			}
		}
		if c.handledBy != "" && !strings.Contains(src, c.handledBy) {
			t.Errorf("v2: %s is advertised as handled by %q, which the sources do not have", c.path, c.handledBy)
		}
	}
	got := leaves("", buildCapabilities(clientCapabilitiesV2))
	for _, p := range got {
		if strings.HasPrefix(p, "fs") || strings.HasPrefix(p, "terminal") {
			t.Errorf("v2 advertises %s", p)
		}
	}
	for _, k := range v2BaselineUpdates {
		if !regexp.MustCompile(`case [^\n]*(\b` + regexp.QuoteMeta(k) + `\b|"` + regexp.QuoteMeta(k) + `")`).MatchString(acpxV2Source(t)) {
			t.Errorf("v2's %s updates are not translated (acpx.V2Session.Translate)", k)
		}
	}
	c, err := acpschema.Load(acpschema.SDKDir())
	if err != nil {
		if os.Getenv("NVIM_ACP_SCHEMA_CHECK") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	for _, p := range got {
		if !c.Defines(2, "ClientCapabilities", strings.Split(p, ".")...) {
			t.Errorf("%s is not a client capability of ACP's schema v2", p)
		}
	}
	for _, k := range v2BaselineUpdates {
		if !c.Defines(2, "SessionUpdate") || !strings.Contains(schemaText(t, 2), `"const": "`+k+`"`) {
			t.Errorf("%s is not a session update of ACP's schema v2", k)
		}
	}
}

// acpxV2Source is acpx/v2.go's text, with the constants' names and values
// both: a case names a kind by either.
func acpxV2Source(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../acpx/v2.go")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, m := range regexp.MustCompile(`(Update\w+V2)\s*=\s*("\w+")`).FindAllStringSubmatch(text, -1) {
		text = strings.ReplaceAll(text, "case "+m[1], "case "+m[2])
		text = strings.ReplaceAll(text, ", "+m[1], ", "+m[2])
	}
	return text
}

// schemaText is the text of the unstable schema of protocol version v.
func schemaText(t *testing.T, v int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(acpschema.SDKDir(), "schema", fmt.Sprintf("v%d", v), "schema.unstable.json"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
