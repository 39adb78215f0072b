package host

// Logging in to agents: the ACP auth methods (auth-methods RFD, the ACP
// registry's AUTHENTICATION.md) and the flow that runs when session/new
// says authentication is required:
//
//  1. A method the environment already serves is tried without asking: an
//     env_var method whose variables are set, or a method with
//     _meta["api-key"] whose provider's key is set (codex-acp and gemini
//     advertise their API key that way). It is passed to authenticate.
//  2. Otherwise the user picks one (the "auth" question, lua/acp/agents/auth.lua):
//     agent    authenticate is called; the agent may open a browser and
//              wait for the login (the chat says so);
//     env_var  the user's values come back in the answer; the agent is
//              restarted with them in its environment, then authenticate;
//     terminal the agent's login ran in a Neovim terminal; when it exited 0
//              the agent is restarted (a fresh process reads the stored
//              credentials).
//  3. session/new is retried. A failure says what was tried and why it
//     failed, and the user may pick again, up to maxAuthAttempts.
//
// Values the user enters are never logged: they travel in the answer and
// the agent's environment only. Secret ones, and the values of an agent's
// secret variables found in its environment, seed the host's scrubber:
// an agent echoing them (on stderr, in a message, in an error) gets them
// masked in the log, the chat and saved chats (learnSecrets; saved chats: applySave).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"

	"github.com/nvim-acp/nvim-acp/login"
)

// authVar is one environment variable of an env_var method.
type authVar struct {
	Name     string `json:"name"`
	Label    string `json:"label,omitempty"`
	Optional bool   `json:"optional,omitempty"`
	Secret   bool   `json:"secret"`
}

// authMethod is one of the agent's auth methods, normalised for the UI.
type authMethod struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type"` // "agent", "env_var" or "terminal"
	Vars        []authVar         `json:"vars,omitempty"`
	Link        string            `json:"link,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	// Command is what a terminal method runs: the agent's own command with
	// Args, or the whole command of a _meta["terminal-auth"] method.
	Command []string `json:"command,omitempty"`
	// Foreign: Command is not the agent's own program (a terminal-auth
	// method may name any): the UI shows it and asks before running it.
	Foreign bool `json:"foreign,omitempty"`
	// LoaderEnv: variables of Env that make any program load other code
	// (LD_PRELOAD, NODE_OPTIONS, ...): the UI warns and asks as for Foreign.
	LoaderEnv []string `json:"loader_env,omitempty"`
	// APIKey: an agent method whose Vars come from _meta["api-key"]; it
	// is authenticated like an env_var method.
	APIKey bool `json:"api_key,omitempty"`
}

// apiKeyVars are the environment variables of the API key of each
// _meta["api-key"] provider, preferred first.
var apiKeyVars = map[string][]string{
	"openai":    {"OPENAI_API_KEY", "CODEX_API_KEY"},
	"anthropic": {"ANTHROPIC_API_KEY"},
	"google":    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	"gemini":    {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
}

// parseAuthMethods decodes the authMethods of an initialize response
// leniently: vars as objects {name, label?, optional?, secret?} or as bare
// strings, env as an object or a list of {name, value}; methods without an
// id are dropped. agentCmd is the agent's command (terminal methods).
func parseAuthMethods(raw json.RawMessage, agentCmd []string) []authMethod {
	var list []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []authMethod
	for _, item := range list {
		var f map[string]json.RawMessage
		if json.Unmarshal(item, &f) != nil {
			continue
		}
		str := func(k string) string {
			var s string
			_ = json.Unmarshal(f[k], &s)
			return s
		}
		m := authMethod{ID: str("id"), Name: str("name"), Description: str("description"), Type: str("type"), Link: str("link")}
		if m.ID == "" {
			m.ID = str("methodId") // ACP v2 spells it so
		}
		if m.ID == "" {
			continue
		}
		if m.Name == "" {
			m.Name = m.ID
		}
		var meta map[string]json.RawMessage
		_ = json.Unmarshal(f["_meta"], &meta)
		switch m.Type {
		case "env_var":
			m.Vars = parseAuthVars(f["vars"])
		case "terminal":
			_ = json.Unmarshal(f["args"], &m.Args)
			m.Env = parseAuthEnv(f["env"])
			m.Command = append(loginBase(agentCmd), m.Args...)
		default:
			m.Type = "agent"
		}
		// qwen-code 0.24: a terminal method spelled in _meta, args appended
		// to the agent's command.
		var mt struct {
			Type string          `json:"type"`
			Args []string        `json:"args"`
			Env  json.RawMessage `json:"env"`
		}
		if m.Type == "agent" && json.Unmarshal(f["_meta"], &mt) == nil && mt.Type == "terminal" {
			m.Type = "terminal"
			m.Args = mt.Args
			if env := parseAuthEnv(mt.Env); len(env) > 0 {
				m.Env = env
			}
			m.Command = append(loginBase(agentCmd), m.Args...)
		}
		// Zed's terminal login: a whole command to run in a terminal.
		var ta struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		}
		if m.Type == "agent" && json.Unmarshal(meta["terminal-auth"], &ta) == nil && ta.Command != "" {
			m.Type = "terminal"
			m.Command = append([]string{ta.Command}, ta.Args...)
			m.Env = ta.Env
			m.Foreign = !ownProgram(m.Command, agentCmd)
		}
		if m.Type == "terminal" {
			m.LoaderEnv = loaderVars(m.Env)
		}
		var ak struct {
			Provider string `json:"provider"`
		}
		if m.Type == "agent" && json.Unmarshal(meta["api-key"], &ak) == nil {
			if vars := apiKeyVars[strings.ToLower(ak.Provider)]; len(vars) > 0 {
				m.APIKey = true
				m.Vars = []authVar{{Name: vars[0], Label: fmt.Sprintf("%s (%s API key)", vars[0], ak.Provider), Secret: true}}
				for _, v := range vars[1:] {
					m.Vars = append(m.Vars, authVar{Name: v, Optional: true, Secret: true})
				}
			}
		}
		if len(m.Vars) == 0 && m.Type != "env_var" {
			// "Requires setting the `OPENAI_API_KEY` environment variable"
			// (qwen-code, codex-acp 0.16.0): served when it is set.
			for _, v := range descVars.FindAllStringSubmatch(m.Description, -1) {
				m.Vars = append(m.Vars, authVar{Name: v[1], Secret: true})
			}
		}
		out = append(out, m)
	}
	return out
}

// Which program a login command runs, and whether it is the agent's own:
// package login.
var (
	loginBase  = login.Base
	ownProgram = login.OwnProgram
	loaderVars = login.LoaderVars
)

// descVars finds the environment variables a method's description asks to set.
var descVars = regexp.MustCompile("`([A-Z][A-Z0-9_]*)` environment variable")

func parseAuthVars(raw json.RawMessage) []authVar {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []authVar
	for _, it := range items {
		var name string
		if json.Unmarshal(it, &name) == nil {
			if name != "" {
				out = append(out, authVar{Name: name, Secret: true})
			}
			continue
		}
		v := struct {
			Name     string `json:"name"`
			Label    string `json:"label"`
			Optional bool   `json:"optional"`
			Secret   *bool  `json:"secret"`
		}{}
		if json.Unmarshal(it, &v) != nil || v.Name == "" {
			continue
		}
		out = append(out, authVar{Name: v.Name, Label: v.Label, Optional: v.Optional, Secret: v.Secret == nil || *v.Secret})
	}
	return out
}

func parseAuthEnv(raw json.RawMessage) map[string]string {
	env := map[string]string{}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		for k, v := range obj {
			if s, ok := v.(string); ok {
				env[k] = s
			}
		}
		return env
	}
	var list []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &list) == nil {
		for _, e := range list {
			if e.Name != "" {
				env[e.Name] = e.Value
			}
		}
	}
	return env
}

// served reports whether env (the agent's environment) already holds what
// method m needs, so it can be tried without asking: every required
// variable of an env_var method, or one of an API key method's.
func (m authMethod) served(env func(string) string) bool {
	if len(m.Vars) == 0 {
		return false
	}
	some, all := false, true
	for _, v := range m.Vars {
		set := env(v.Name) != ""
		some = some || set
		if !v.Optional && !set {
			all = false
		}
	}
	if m.APIKey {
		return some
	}
	return some && all
}

// varNames lists the variables of m.
func (m authMethod) varNames() []string {
	var out []string
	for _, v := range m.Vars {
		out = append(out, v.Name)
	}
	return out
}

// authHintFor describes methods in one line ("" when there are none), to
// go with an "authentication required" error.
func authHintFor(methods []authMethod) string {
	if len(methods) == 0 {
		return ""
	}
	var parts []string
	for _, m := range methods {
		p := m.Name
		if m.Description != "" {
			p += " (" + m.Description + ")"
		}
		if len(m.Vars) > 0 {
			p += ": set " + strings.Join(m.varNames(), " or ")
		}
		parts = append(parts, p)
	}
	return "The agent can authenticate with: " + strings.Join(parts, "; ") +
		". :AcpChat again to pick one, or set the key in agents.<name>.env."
}

// authHint describes the authMethods of an initialize response in one line.
func authHint(initialize json.RawMessage) string {
	var r struct {
		AuthMethods json.RawMessage `json:"authMethods"`
	}
	if json.Unmarshal(initialize, &r) != nil {
		return ""
	}
	return authHintFor(parseAuthMethods(r.AuthMethods, nil))
}

// authMethodsOf are the auth methods an error's data names (qwen-code
// sends {authMethods} with its "Authentication required").
func authMethodsOf(err error, agentCmd []string) []authMethod {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return nil
	}
	data, ok := re.Data.(map[string]any)
	if !ok || data["authMethods"] == nil {
		return nil
	}
	raw, _ := json.Marshal(data["authMethods"])
	return parseAuthMethods(raw, agentCmd)
}

// isAuthError reports whether err is the agent asking for authentication.
func isAuthError(err error) bool {
	var re *acp.RequestError
	if errors.As(err, &re) && re.Code == -32000 {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "auth") || strings.Contains(s, "api key") || strings.Contains(s, "log in") || strings.Contains(s, "login")
}

// maxAuthAttempts bounds the logins tried for one session/new.
const maxAuthAttempts = 4

// authAnswer is the user's answer to the auth question.
type authAnswer struct {
	Method   string            `json:"method"`
	Env      map[string]string `json:"env"`
	ExitCode *int              `json:"exit_code"`
	// fromEnv: the environment serves the method (its variables are
	// set): authenticate with it, whatever its type.
	fromEnv bool
}

// rpcAnswerAuth answers auth question id (acp_answer_auth): {method, env?}
// or {method, exit_code} after a terminal login; {} gives up.
func (h *Host) rpcAnswerAuth(id int, answer map[string]any) error {
	choice := ""
	if m, _ := answer["method"].(string); m != "" {
		b, err := json.Marshal(answer)
		if err != nil {
			return fmt.Errorf("acp_answer_auth: %w", err)
		}
		choice = string(b)
	}
	return h.answerer(authQuestion)(id, choice)
}

// env returns the value of variable k in the agent's environment: its
// spec's env over the host's.
func (s AgentSpec) env(k string) string {
	if v, ok := s.Env[k]; ok {
		return v
	}
	return os.Getenv(k)
}

// newSession runs session/new on a, logging in as the agent asks when it
// says authentication is required (see the top of this file), and
// registers the session on the agent. It returns the agent the session
// lives on: a restarted one after some logins.
func (s *Session) newSession(ctx context.Context, a *Agent, servers []acp.McpServer) (*Agent, json.RawMessage, error) {
	name := s.opts.Agent.Name
	tried := map[string]bool{}
	why := ""      // what went wrong last, shown with the next question
	loggedIn := "" // the method of the last login that went through
	shown := false // why is in the chat already
	for attempt := 0; ; attempt++ {
		actx, cancel := a.stepContext(ctx, "session/new")
		created := a.creatingSession()
		// The servers as the wire takes them (editormcp.Wire: MCP-over-ACP
		// entries the SDK's type cannot hold).
		resp, err := request[json.RawMessage](actx, a, acp.AgentMethodSessionNew, s.newParams(a, servers))
		if err == nil {
			cancel()
			err = s.registerNew(a, resp)
			created()
			if err != nil {
				return a, nil, err
			}
			if loggedIn != "" {
				s.emit(messageEvent("info", fmt.Sprintf("Logged in to %s with %q.", name, loggedIn)))
			}
			return a, resp, nil
		}
		created()
		msg := a.stepErr(actx, "session/new", err)
		cancel()
		methods := a.auth
		if more := authMethodsOf(err, a.spec.Cmd); len(more) > 0 {
			methods = more // qwen names them in the error
		}
		if !isAuthError(err) || len(methods) == 0 {
			if hint := authHintFor(methods); hint != "" && isAuthError(err) {
				msg = fmt.Errorf("%w\n%s", msg, hint)
			}
			return a, nil, msg
		}
		switch {
		case loggedIn != "":
			why = fmt.Sprintf("logged in with %q, but %s still says: %v", loggedIn, name, msg)
		case why == "":
			why = msg.Error()
		}
		// The final error repeats why only when the chat has not shown it.
		failed := func(what string) error {
			if shown {
				return fmt.Errorf("%s %s", what, authHintFor(methods))
			}
			return fmt.Errorf("%s\n%s %s", why, what, authHintFor(methods))
		}
		if attempt >= maxAuthAttempts {
			return a, nil, failed(fmt.Sprintf("Gave up logging in to %s after %d attempts.", name, attempt))
		}
		m, ans, err := s.chooseAuth(ctx, a, methods, tried, why)
		if errors.Is(err, errLoginCancelled) {
			return a, nil, failed("Login cancelled.")
		}
		if err != nil {
			return a, nil, err
		}
		tried[m.ID] = true
		a, why = s.login(ctx, a, m, ans)
		shown = why != "" // login shows its failures in the chat
		loggedIn = ""
		if why == "" {
			loggedIn = m.Name
		}
	}
}

// errLoginCancelled: the user chose no auth method.
var errLoginCancelled = errors.New("login cancelled")

// chooseAuth returns the method to try: one the environment serves (not
// tried yet), else the user's choice. An error means the user gave up.
func (s *Session) chooseAuth(ctx context.Context, a *Agent, methods []authMethod, tried map[string]bool, why string) (authMethod, authAnswer, error) {
	for _, m := range methods {
		if !tried[m.ID] && m.served(a.spec.env) {
			s.log.Info("auth: trying a method the environment serves", "method", m.ID, "vars", m.varNames())
			s.emit(messageEvent("info", fmt.Sprintf("%s asks to log in: trying %q with %s from the environment.",
				s.opts.Agent.Name, m.Name, strings.Join(setVars(m, a.spec.env), ", "))))
			return m, authAnswer{Method: m.ID, fromEnv: true}, nil
		}
	}
	choice, err := s.ask(ctx, authQuestion, authEvent(s.opts.Agent.Name, agentLabel(a.initResp.AgentInfo), methods, why))
	if err != nil {
		return authMethod{}, authAnswer{}, fmt.Errorf("log in to %s: %w", s.opts.Agent.Name, err)
	}
	var ans authAnswer
	if choice != "" {
		_ = json.Unmarshal([]byte(choice), &ans)
	}
	for _, m := range methods {
		if ans.Method != "" && m.ID == ans.Method {
			s.h.learnSecrets(methods, a.spec.env, m, ans.Env)
			s.log.Info("auth: the user picked a method", "method", m.ID, "type", m.Type, "vars", sortedKeys(ans.Env))
			return m, ans, nil
		}
	}
	return authMethod{}, authAnswer{}, errLoginCancelled
}

// learnSecrets adds to the host's scrubber the values of the secret
// variables of methods that env sets, and values (the user's answer to m,
// nil for none): any of those the user gave as no secret is left out.
func (h *Host) learnSecrets(methods []authMethod, env func(string) string, m authMethod, values map[string]string) {
	plain := map[string]bool{}
	for _, mm := range methods {
		for _, v := range mm.Vars {
			if !v.Secret {
				plain[v.Name] = true
				continue
			}
			if x := env(v.Name); x != "" {
				h.secrets.Add(x)
			}
		}
	}
	for _, v := range m.Vars {
		plain[v.Name] = !v.Secret
	}
	for k, v := range values {
		if !plain[k] {
			h.secrets.Add(v)
		}
	}
}

// setVars are the variables of m set in env.
func setVars(m authMethod, env func(string) string) []string {
	var out []string
	for _, v := range m.Vars {
		if env(v.Name) != "" {
			out = append(out, v.Name)
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// login runs method m with the user's answer and returns the agent to
// retry session/new on, and why the login failed ("" when it did not).
func (s *Session) login(ctx context.Context, a *Agent, m authMethod, ans authAnswer) (*Agent, string) {
	name := s.opts.Agent.Name
	fail := func(format string, args ...any) (*Agent, string) {
		why := fmt.Sprintf(format, args...)
		s.emit(messageEvent("error", why))
		return a, why
	}
	switch {
	case m.Type == "terminal" && !ans.fromEnv:
		if ans.ExitCode == nil || *ans.ExitCode != 0 {
			code := -1
			if ans.ExitCode != nil {
				code = *ans.ExitCode
			}
			return fail("the login in the terminal (%s) failed (exit %d)", strings.Join(m.Command, " "), code)
		}
		s.emit(messageEvent("info", fmt.Sprintf("Logged in through %q; restarting %s.", m.Name, name)))
		na, err := s.restartAgent(ctx, a, nil)
		if err != nil {
			return fail("restart %s after the login: %v", name, err)
		}
		return na, ""
	case len(ans.Env) > 0:
		na, err := s.restartAgent(ctx, a, ans.Env)
		if err != nil {
			return fail("restart %s with %s: %v", name, strings.Join(sortedKeys(ans.Env), ", "), err)
		}
		a = na
	case m.Type == "agent" && !m.APIKey && !ans.fromEnv: // an API key is no browser login
		s.emit(messageEvent("info", fmt.Sprintf(
			"Logging in to %s with %q: the agent may have opened a browser; finish the login there (:AcpStop gives up).", name, m.Name)))
	}
	actx, cancel := a.context(ctx)
	defer cancel()
	method := acp.AgentMethodAuthenticate
	if a.v2() {
		method = acpx.MethodAuthLogin // v2's name, same params
	}
	if _, err := request[json.RawMessage](actx, a, method, acp.AuthenticateRequest{MethodId: m.ID}); err != nil {
		return fail("log in with %q failed: %v", m.Name, a.describe("authenticate", err))
	}
	s.log.Info("auth: authenticated", "method", m.ID)
	return a, ""
}

// restartAgent replaces a with a fresh agent process for the session: its
// spec with env added (nil: the same spec, e.g. after a terminal login).
// a stops unless other sessions use it.
func (s *Session) restartAgent(ctx context.Context, a *Agent, env map[string]string) (*Agent, error) {
	spec := s.opts.Agent
	if len(env) > 0 {
		merged := make(map[string]string, len(spec.Env)+len(env))
		for k, v := range spec.Env {
			merged[k] = v
		}
		for k, v := range env {
			merged[k] = v
		}
		spec.Env = merged
	}
	a.mu.Lock()
	shared := len(a.sessions) > 0
	a.mu.Unlock()
	if !shared {
		s.h.stopAgent(a)
	} else if len(env) == 0 {
		return a, nil // others use it: retry on its connection
	}
	na, err := s.h.sessionAgent(s, spec)
	if err != nil {
		return a, err
	}
	s.mu.Lock()
	s.opts.Agent = spec
	s.mu.Unlock()
	actx, cancel := na.context(ctx)
	defer cancel()
	if err := na.ready(actx); err != nil {
		return na, err
	}
	return na, nil
}

// agentLabel is what the agent says it is (its title, else its name), or
// "" when it says nothing.
func agentLabel(info *acp.Implementation) string {
	if info == nil {
		return ""
	}
	if info.Title != nil && *info.Title != "" {
		return *info.Title
	}
	return info.Name
}
