package host

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// luaHandlers are the event types lua/acp/session/events.lua has a handler for.
func luaHandlers(t *testing.T) []string { return luaTable(t, "handlers") }

// luaTable are the names of the functions of table name in lua/acp/session/events.lua.
func luaTable(t *testing.T, name string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "lua", "acp", "session", "events.lua"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^(?:function ` + name + `\.(\w+)\(|` + name + `\.(\w+) =)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		out = append(out, m[1]+m[2])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestEventTypesHaveLuaHandlers(t *testing.T) {
	lua := luaHandlers(t)
	if len(lua) < 10 {
		t.Fatalf("found only %v in lua/acp/session/events.lua: is the handler table still written as handlers.x?", lua)
	}
	for _, typ := range eventTypes {
		if !slices.Contains(lua, typ) {
			t.Errorf("event type %q has no handler in lua/acp/session/events.lua", typ)
		}
	}
	for _, h := range lua {
		if !slices.Contains(eventTypes, h) {
			t.Errorf("lua/acp/session/events.lua handles %q, which the host never sends (host/events.go)", h)
		}
	}
}

// Events of no session (the registry's) have their own route in
// lua/acp/session/events.lua (the global table), and it handles nothing else.
func TestRegistryEventTypesHaveGlobalLuaHandlers(t *testing.T) {
	lua := luaTable(t, "global")
	want := slices.Clone(registryEventTypes)
	slices.Sort(want)
	if !slices.Equal(lua, want) {
		t.Fatalf("lua/acp/session/events.lua global handlers %v, host registry events %v", lua, registryEventTypes)
	}
}

// Events are built by the constructors of events.go only, so eventTypes
// lists every type sent (ui.go merges streams of the types it is given).
func TestEventsAreBuiltInEventsGo(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`Event\{"type"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "events.go" || f == "ui.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if literal.MatchString(line) {
				t.Errorf("%s:%d builds an event by hand; add a constructor to events.go: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// Each kind of question is answered by its own method: an id of another
// kind is refused, and the question keeps waiting for its own answer.
func TestAnswerMethodsAnswerTheirOwnKind(t *testing.T) {
	h := &Host{answers: map[int]pendingAnswer{}}
	ch := make(chan string, 1)
	s := &Session{perms: map[int]*pending{7: {ch: ch, kind: resumeQuestion}}}
	h.registerAnswer(7, s, resumeQuestion)
	for _, q := range []question{permissionQuestion, fsQuestion} {
		if err := h.answerer(q)(7, "x"); err == nil {
			t.Fatalf("%s answered a resume question", q.answer)
		}
	}
	if err := h.answerer(resumeQuestion)(7, "old-1"); err != nil {
		t.Fatal(err)
	}
	if got := <-ch; got != "old-1" {
		t.Fatalf("answer %q", got)
	}
	h.unregisterAnswer(7)
	if err := h.answerer(resumeQuestion)(7, "late"); err != nil {
		t.Fatalf("a late answer is an error: %v", err)
	}
}

// Every tool call the UI gets carries the command line the host computed
// (the one consent approves), never the agent's own value of that key.
func TestToolCallsCarryTheHostsCommandLine(t *testing.T) {
	argv := []any{"printf", `%s\n`, `it's a\b`}
	cases := []struct {
		name string
		tc   map[string]any
		want any // the tool call's clientKey value; nil: no key
	}{
		{"argv, quoted where needed", map[string]any{"rawInput": map[string]any{"command": argv}},
			map[string]any{"command": `printf '%s\n' 'it'\''s a\b'`, "runs": true}},
		{"a shell line as it is", map[string]any{"rawInput": map[string]any{"command": "ls -la | wc"}},
			map[string]any{"command": "ls -la | wc", "runs": true}},
		{"a system shell's script", map[string]any{"rawInput": map[string]any{"cmd": []any{"/bin/bash", "-lc", "make"}}},
			map[string]any{"command": "make", "runs": true}},
		{"an argv that is no line still runs", map[string]any{"rawInput": map[string]any{"command": []any{"sleep", 5.0}}},
			map[string]any{"runs": true}},
		{"no command", map[string]any{"rawInput": map[string]any{"path": "/a"}}, map[string]any{}},
		{"the agent's own value is dropped", map[string]any{clientKey: map[string]any{"command": "ls"},
			"rawInput": map[string]any{"command": "rm -rf ~"}}, map[string]any{"command": "rm -rf ~", "runs": true}},
		{"an update without rawInput leaves the line as it was", map[string]any{clientKey: map[string]any{"command": "ls"},
			"status": "completed"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(where string, tc map[string]any) {
				got, ok := tc[clientKey]
				if (c.want == nil) != !ok || (ok && !reflect.DeepEqual(got, c.want)) {
					t.Errorf("%s: %s = %#v, want %#v", where, clientKey, got, c.want)
				}
			}
			u := map[string]any{"sessionUpdate": "tool_call_update"}
			for k, v := range c.tc {
				u[k] = v
			}
			check("tool_call_update", updateEvent(u)["update"].(map[string]any))
			req := map[string]any{"toolCall": maps.Clone(c.tc)}
			check("permission", permissionEvent(req)["request"].(map[string]any)["toolCall"].(map[string]any))
		})
	}
	// Other updates are left alone.
	u := map[string]any{"sessionUpdate": "plan", "rawInput": map[string]any{"command": "ls"}}
	if _, ok := updateEvent(u)["update"].(map[string]any)[clientKey]; ok {
		t.Error("a plan got a command line")
	}
}
