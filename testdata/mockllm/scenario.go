package mockllm

import (
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Scenario is the script the mock model plays: rules matched against each
// request's conversation, first match wins.
//
// A rule's steps are cut into segments after each tool step: a reply is
// one segment, ending with that tool call. Which segment answers is
// counted, not remembered: the number of assistant turns with tool calls
// since the newest user prompt. So the request carrying the result of the
// first tool call gets the second segment, and so on, with any agent and
// any API (their requests carry the whole conversation).
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Prompt is what try-agent sends when none is given.
	Prompt string `json:"prompt,omitempty"`
	// Prompts are several turns try-agent sends one after another when
	// none is given (Prompt, if set too, goes first).
	Prompts []string `json:"prompts,omitempty"`
	// Rewind is what try-agent does after the prompts: rewind to a
	// message, resend it edited, and check files and conversation.
	Rewind *RewindCheck `json:"rewind,omitempty"`
	// Worktrees is what try-agent -worktrees A,B checks: each agent's
	// worktree after its turn, and the user's tree after both merged.
	Worktrees *WorktreeCheck `json:"worktrees,omitempty"`
	// Files are created in the workspace before the run (path -> text).
	Files map[string]string `json:"files,omitempty"`
	// Vars fill {{name}} placeholders (the server's own vars win).
	Vars  map[string]string `json:"vars,omitempty"`
	Rules []Rule            `json:"rules"`
	// Default answers when no rule matches (default: a short text).
	Default []Step `json:"default,omitempty"`
}

// RewindCheck is a rewind try-agent makes after a scenario's prompts
// (require("acp").rewind{message = Message}), then the edited message it
// sends, and what it checks.
type RewindCheck struct {
	// Message is the user message rewound to (1-based).
	Message int `json:"message"`
	// Resend is the edited message sent after the rewind.
	Resend string `json:"resend"`
	// Files are the workspace's files after the resent turn (path -> text;
	// null: the file must not exist). Files not named are not checked.
	Files map[string]*string `json:"files,omitempty"`
	// Kept must each be in the conversation of a model request after the
	// resend (the messages before Message, and the resent one); Forgotten
	// must be in none of them (the dropped turns). Matched as written
	// (case counts) in the requests' messages, not the system prompt.
	Kept      []string `json:"kept,omitempty"`
	Forgotten []string `json:"forgotten,omitempty"`
}

// WorktreeCheck is what try-agent -worktrees A,B checks, by agent name:
// Files, each agent's worktree after its turn (path -> text), and Merged,
// the user's tree once the agent named merged first (hunk by hunk) and
// the other (whole, its conflicts resolved keeping both sides: yours,
// then theirs) are merged back. Files not named are not checked.
type WorktreeCheck struct {
	Files  map[string]map[string]string `json:"files,omitempty"`
	Merged map[string]map[string]string `json:"merged,omitempty"`
}

// Rule is a condition and the steps that answer it.
type Rule struct {
	Name  string `json:"name"`
	When  When   `json:"when"`
	Steps []Step `json:"steps"`

	user, toolResult, result, model, api *regexp.Regexp
}

// When holds regular expressions (Go syntax); all that are set must match.
type When struct {
	// User matches the newest user prompt (a user message that is not
	// tool results). Its groups fill {{1}}, {{2}}... and {{name}}.
	User string `json:"user,omitempty"`
	// ToolResult matches the name of a tool whose result is the last
	// message. Such a rule answers with its first segment every time.
	ToolResult string `json:"tool_result,omitempty"`
	// Result matches the output of a tool result that is the last message
	// (e.g. "(?i)reject|denied|cancel" for a refused call); like
	// ToolResult, such a rule answers with its first segment.
	Result string `json:"result,omitempty"`
	// ResultError, when set, requires the last tool result to be marked
	// as an error (true) or not (false).
	ResultError *bool  `json:"result_error,omitempty"`
	Model       string `json:"model,omitempty"`
	API         string `json:"api,omitempty"`
}

// Step is one part of a reply; set one of Text, Thinking, Tool, Any, Error.
type Step struct {
	Text     string `json:"text,omitempty"`
	Thinking string `json:"thinking,omitempty"`
	// Tool matches the name of an offered tool; the first tool offered
	// that matches is called with Args, keeping only the keys its schema
	// has (so one step can name file_path, absolute_path and filePath).
	Tool string         `json:"tool,omitempty"`
	Args map[string]any `json:"args,omitempty"`
	// Input is the text a free-form (custom) tool gets; a JSON tool gets
	// {"input": Input} when Args is empty.
	Input string `json:"input,omitempty"`
	// Any is a list of alternative tool steps: the first whose tool is
	// offered is taken.
	Any []Step `json:"any,omitempty"`
	// Error answers the request with an API error (before anything was
	// streamed), or breaks the stream (after).
	Error *StepError `json:"error,omitempty"`
	// DelayMS waits before this step (the client may cancel meanwhile).
	DelayMS int `json:"delay_ms,omitempty"`

	tool *regexp.Regexp
}

// StepError is an API error a step answers with.
type StepError struct {
	Status  int    `json:"status"`
	Type    string `json:"type,omitempty"`
	Message string `json:"message"`
}

//go:embed scenarios/*.json
var builtin embed.FS

// Builtin lists the names of the scenarios shipped with the mock.
func Builtin() []string {
	ents, _ := builtin.ReadDir("scenarios")
	var names []string
	for _, e := range ents {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(names)
	return names
}

// Load reads a scenario: a built-in one by name, else a JSON file.
func Load(nameOrPath string) (*Scenario, error) {
	b, err := builtin.ReadFile("scenarios/" + nameOrPath + ".json")
	if err != nil {
		b, err = os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: not built in (%s) and %w", nameOrPath, strings.Join(Builtin(), ", "), err)
		}
	}
	sc, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", nameOrPath, err)
	}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(nameOrPath), ".json")
	}
	return sc, nil
}

// Parse decodes a scenario and compiles its expressions.
func Parse(b []byte) (*Scenario, error) {
	var sc Scenario
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	for i := range sc.Rules {
		r := &sc.Rules[i]
		if r.Name == "" {
			r.Name = fmt.Sprintf("rule %d", i+1)
		}
		var err error
		for _, c := range []struct {
			expr string
			re   **regexp.Regexp
		}{{r.When.User, &r.user}, {r.When.ToolResult, &r.toolResult}, {r.When.Result, &r.result}, {r.When.Model, &r.model}, {r.When.API, &r.api}} {
			if c.expr == "" {
				continue
			}
			if *c.re, err = regexp.Compile(c.expr); err != nil {
				return nil, fmt.Errorf("%s: %w", r.Name, err)
			}
		}
		if err := compileSteps(r.Steps); err != nil {
			return nil, fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	if err := compileSteps(sc.Default); err != nil {
		return nil, fmt.Errorf("default: %w", err)
	}
	return &sc, nil
}

func compileSteps(steps []Step) error {
	for i := range steps {
		s := &steps[i]
		if s.Tool != "" {
			re, err := regexp.Compile(s.Tool)
			if err != nil {
				return fmt.Errorf("step %d: %w", i+1, err)
			}
			s.tool = re
		}
		for j := range s.Any {
			if s.Any[j].Tool == "" {
				return fmt.Errorf("step %d: alternative %d names no tool", i+1, j+1)
			}
		}
		if err := compileSteps(s.Any); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}

func (s *Step) isTool() bool { return s.Tool != "" || len(s.Any) > 0 }

// segments cuts steps after each tool step.
func segments(steps []Step) [][]Step {
	var segs [][]Step
	start := 0
	for i := range steps {
		if steps[i].isTool() {
			segs = append(segs, steps[start:i+1])
			start = i + 1
		}
	}
	if start < len(steps) {
		segs = append(segs, steps[start:])
	}
	return segs
}

// Part is one resolved piece of a reply.
type Part struct {
	Kind    string // "text", "thinking", "tool" or "error"
	Text    string
	Call    Call
	Err     *StepError
	DelayMS int
}

// Reply is what the mock answers to one request.
type Reply struct {
	Rule  string
	Parts []Part
}

// ToolUse reports whether the reply ends with a tool call.
func (r *Reply) ToolUse() bool {
	return len(r.Parts) > 0 && r.Parts[len(r.Parts)-1].Kind == "tool"
}

// Calls returns the reply's tool calls.
func (r *Reply) Calls() []Call {
	var calls []Call
	for _, p := range r.Parts {
		if p.Kind == "tool" {
			calls = append(calls, p.Call)
		}
	}
	return calls
}

// state is what rules are matched against.
type state struct {
	prompt    string   // the newest user prompt
	rounds    int      // assistant turns with tool calls since it
	lastTools []string // names of the tools whose results are the last message
	lastOuts  []string // their outputs
	lastErrs  []bool   // whether each is an error
	lastOut   string   // the last tool result's output
}

func inspect(c *Conversation) state {
	var st state
	at := -1
	for i := len(c.Messages) - 1; i >= 0; i-- {
		m := c.Messages[i]
		if m.Role == "user" && len(m.Results) == 0 && m.Text != "" {
			st.prompt, at = m.Text, i
			break
		}
	}
	for _, m := range c.Messages[at+1:] {
		if m.Role == "assistant" && len(m.Calls) > 0 {
			st.rounds++
		}
	}
	if n := len(c.Messages); n > 0 {
		for _, r := range c.Messages[n-1].Results {
			st.lastTools = append(st.lastTools, r.Name)
			st.lastOuts = append(st.lastOuts, r.Output)
			st.lastErrs = append(st.lastErrs, r.Error)
			st.lastOut = r.Output
		}
	}
	return st
}

// Reply chooses the answer to a conversation. vars fill placeholders on
// top of the scenario's own.
func (sc *Scenario) Reply(c *Conversation, vars map[string]string, newID func() string) Reply {
	if c.Schema != nil {
		b, _ := json.Marshal(instance(c.Schema, ""))
		return Reply{Rule: "structured output", Parts: []Part{{Kind: "text", Text: string(b)}}}
	}
	st := inspect(c)
	for i := range sc.Rules {
		r := &sc.Rules[i]
		groups, ok := r.match(c, st)
		if !ok {
			continue
		}
		seg := st.rounds
		if r.reacts() {
			seg = 0
		}
		segs := segments(r.Steps)
		if seg >= len(segs) {
			continue
		}
		v := sc.vars(c, st, vars, groups)
		parts, ok := resolve(segs[seg], c, v, newID, r.Name)
		if !ok {
			continue // offers no tools: a side request (titles, summaries)
		}
		return Reply{Rule: r.Name, Parts: parts}
	}
	steps := sc.Default
	if len(steps) == 0 {
		steps = []Step{{Text: "Hello from mockllm. This is the default answer: no rule of scenario " + sc.Name + " matched."}}
	}
	segs := segments(steps)
	if st.rounds < len(segs) {
		v := sc.vars(c, st, vars, nil)
		if parts, ok := resolve(segs[st.rounds], c, v, newID, "default"); ok {
			return Reply{Rule: "default", Parts: parts}
		}
	}
	return Reply{Rule: "default", Parts: []Part{{Kind: "text", Text: "Done."}}}
}

// reacts reports whether the rule answers the last tool result.
func (r *Rule) reacts() bool {
	return r.toolResult != nil || r.result != nil || r.When.ResultError != nil
}

func (r *Rule) match(c *Conversation, st state) (map[string]string, bool) {
	if r.api != nil && !r.api.MatchString(c.API) {
		return nil, false
	}
	if r.model != nil && !r.model.MatchString(c.Model) {
		return nil, false
	}
	if r.reacts() {
		// One of the last results must meet every result condition.
		hit := false
		for i, name := range st.lastTools {
			hit = hit || (r.toolResult == nil || r.toolResult.MatchString(name)) &&
				(r.result == nil || r.result.MatchString(st.lastOuts[i])) &&
				(r.When.ResultError == nil || *r.When.ResultError == st.lastErrs[i])
		}
		if !hit {
			return nil, false
		}
	}
	groups := map[string]string{}
	if r.user != nil {
		m := r.user.FindStringSubmatch(st.prompt)
		if m == nil {
			return nil, false
		}
		for i, g := range m[1:] {
			groups[fmt.Sprint(i+1)] = g
		}
		for i, name := range r.user.SubexpNames() {
			if name != "" {
				groups[name] = m[i]
			}
		}
	}
	return groups, true
}

var (
	absPathRe = regexp.MustCompile(`(?:^|[\s"'` + "`" + `(])(/[^\s"'` + "`" + `)]+)`)
	cwdRes    = []*regexp.Regexp{
		regexp.MustCompile(`<cwd>([^<]+)</cwd>`),
		regexp.MustCompile(`(?i)working directory:\s*(/\S+)`),
		regexp.MustCompile(`(?i)working in the directory:?\s*(/[^\s'"]+)`),
		regexp.MustCompile(`(?i)current directory(?: is)?:?\s*(/[^\s'"]+)`),
	}
)

// vars are the placeholder values: the scenario's, the server's, then
// what the request tells: cwd, prompt, prompt_path, last_result, model,
// and the prompt's groups.
func (sc *Scenario) vars(c *Conversation, st state, server, groups map[string]string) map[string]string {
	v := map[string]string{}
	for k, x := range sc.Vars {
		v[k] = x
	}
	for k, x := range server {
		v[k] = x
	}
	if v["cwd"] == "" {
		v["cwd"] = findCwd(c)
	}
	v["prompt"] = st.prompt
	if m := absPathRe.FindStringSubmatch(st.prompt); m != nil {
		v["prompt_path"] = strings.TrimRight(m[1], ".,;:!?")
	}
	v["last_result"] = truncate(st.lastOut, 2000)
	v["model"] = c.Model
	for k, x := range groups {
		v[k] = x
	}
	return v
}

// findCwd looks for the working directory where agents state it: the
// system prompt or the first messages.
func findCwd(c *Conversation) string {
	texts := []string{c.System}
	for _, m := range c.Messages {
		texts = append(texts, m.Text)
	}
	for _, t := range texts {
		for _, re := range cwdRes {
			if m := re.FindStringSubmatch(t); m != nil {
				return strings.TrimRight(strings.TrimSpace(m[1]), ".,;")
			}
		}
	}
	return ""
}

var placeholderRe = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// expand fills {{name}} placeholders; unknown names stay as written.
func expand(s string, v map[string]string) string {
	return placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
		name := placeholderRe.FindStringSubmatch(m)[1]
		if x, ok := v[name]; ok {
			return x
		}
		return m
	})
}

func expandAny(x any, v map[string]string) any {
	switch x := x.(type) {
	case string:
		return expand(x, v)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = expandAny(e, v)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = expandAny(e, v)
		}
		return out
	}
	return x
}

// resolve turns a segment into parts. It fails when the segment calls a
// tool and the request offers none.
func resolve(steps []Step, c *Conversation, v map[string]string, newID func() string, rule string) ([]Part, bool) {
	var parts []Part
	for _, s := range steps {
		switch {
		case s.Error != nil:
			e := *s.Error
			e.Message = expand(e.Message, v)
			parts = append(parts, Part{Kind: "error", Err: &e, DelayMS: s.DelayMS})
		case s.Thinking != "":
			parts = append(parts, Part{Kind: "thinking", Text: expand(s.Thinking, v), DelayMS: s.DelayMS})
		case s.Text != "":
			parts = append(parts, Part{Kind: "text", Text: expand(s.Text, v), DelayMS: s.DelayMS})
		case s.isTool():
			if len(c.Tools) == 0 {
				return nil, false
			}
			call, ok := chooseTool(s, c)
			if !ok {
				parts = append(parts, Part{Kind: "text", Text: fmt.Sprintf(
					"mockllm: %s: no offered tool matches %s; offered: %s",
					rule, describe(s), strings.Join(c.toolNames(), ", "))})
				return parts, true
			}
			call.ID = newID()
			call.Args = expand(call.Args, v)
			if !call.Custom {
				var args any
				if json.Unmarshal([]byte(call.Args), &args) == nil {
					b, _ := json.Marshal(expandAny(args, v))
					call.Args = string(b)
				}
			}
			parts = append(parts, Part{Kind: "tool", Call: call, DelayMS: s.DelayMS})
		}
	}
	return parts, true
}

func describe(s Step) string {
	if len(s.Any) == 0 {
		return "/" + s.Tool + "/"
	}
	var res []string
	for _, a := range s.Any {
		res = append(res, "/"+a.Tool+"/")
	}
	return "any of " + strings.Join(res, " ")
}

// chooseTool picks the first offered tool matching the step (or its first
// matching alternative) and builds the call's arguments, placeholders
// not yet filled.
func chooseTool(s Step, c *Conversation) (Call, bool) {
	alts := s.Any
	if len(alts) == 0 {
		alts = []Step{s}
	}
	for _, a := range alts {
		for _, t := range c.Tools {
			if !a.tool.MatchString(t.Name) {
				continue
			}
			if t.Custom {
				in := a.Input
				if in == "" && a.Args != nil {
					if s, ok := a.Args["input"].(string); ok {
						in = s
					} else {
						b, _ := json.Marshal(a.Args)
						in = string(b)
					}
				}
				return Call{Name: t.Name, Args: in, Custom: true}, true
			}
			args := a.Args
			if args == nil && a.Input != "" {
				args = map[string]any{"input": a.Input}
			}
			b, _ := json.Marshal(fitSchema(args, t.Schema))
			return Call{Name: t.Name, Args: string(b), Search: t.Search}, true
		}
	}
	return Call{}, false
}

// fitSchema keeps the arguments the tool's schema names (all of them when
// the schema names none).
func fitSchema(args map[string]any, schema map[string]any) map[string]any {
	if args == nil {
		return map[string]any{}
	}
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return args
	}
	out := map[string]any{}
	for k, x := range args {
		if _, ok := props[k]; ok {
			out[k] = x
		}
	}
	return out
}

// instance builds a value that fits a JSON schema (structured output
// requests such as Gemini CLI's "who speaks next" check). Lists of
// choices answer their first; next_speaker answers "user".
func instance(schema map[string]any, name string) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		if name == "next_speaker" {
			for _, e := range enum {
				if e == "user" {
					return e
				}
			}
		}
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	if list, ok := schema["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch strings.ToLower(typ) {
	case "object", "":
		props, _ := schema["properties"].(map[string]any)
		if typ == "" && props == nil {
			return "mock"
		}
		out := map[string]any{}
		for k, p := range props {
			ps, _ := p.(map[string]any)
			out[k] = instance(ps, k)
		}
		return out
	case "array":
		return []any{}
	case "boolean":
		return false
	case "integer", "number":
		return 0
	}
	if name == "next_speaker" {
		return "user"
	}
	return "mock"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
