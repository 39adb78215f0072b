package host

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/nvim-acp/nvim-acp/acpx"
)

// authStatusTimeout bounds each agent's auth/status (:checkhealth waits).
const authStatusTimeout = 3 * time.Second

// rpcAuthStatus is what each running agent says of its sign-in, for
// :checkhealth acp: {agent, supported, state?, accounts?, error?} per
// agent, by name. An agent that advertises auth.status (claude-agent-acp)
// is asked auth/status (ACP v1, unstable: it has no side effects and
// never answers auth_required); the others say supported = false.
func (h *Host) rpcAuthStatus() ([]map[string]any, error) {
	h.mu.Lock()
	agents := make([]*Agent, 0, len(h.agents))
	for _, a := range h.agents {
		agents = append(agents, a)
	}
	h.mu.Unlock()
	out := make([]map[string]any, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = a.authStatus()
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i]["agent"].(string) < out[j]["agent"].(string) })
	return out, nil
}

// authStatus is a's sign-in for :checkhealth: what it last said (asked
// once per process, kept current by auth/status_update), asked now when
// it said nothing yet.
func (a *Agent) authStatus() map[string]any {
	r := map[string]any{"agent": a.spec.Name, "supported": false}
	ctx, cancel := a.context(context.Background())
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, authStatusTimeout)
	defer cancelT()
	if err := a.ready(ctx); err != nil {
		r["error"] = err.Error()
		return r
	}
	a.mu.Lock()
	pushed := a.authSt != nil // claude-agent-acp's _auth/status_update, unasked
	a.mu.Unlock()
	if !a.caps.AuthStatus && !pushed {
		return r
	}
	r["supported"] = true
	st, err := a.fetchAuthStatus(ctx)
	if err != nil {
		r["error"] = err.Error()
		return r
	}
	for k, v := range authTable(st) {
		r[k] = v
	}
	return r
}

// authTable is st for Lua: {state, accounts = {{label, active?}...}}.
func authTable(st acpx.AuthStatus) map[string]any {
	accounts := make([]map[string]any, 0, len(st.Accounts))
	for _, ac := range st.Accounts {
		m := map[string]any{"label": ac.Label}
		if ac.Active != nil {
			m["active"] = *ac.Active
		}
		accounts = append(accounts, m)
	}
	return map[string]any{"state": st.State, "accounts": accounts}
}

// fetchAuthStatus is a's sign-in: the one it said last, else auth/status
// asked now (and kept).
func (a *Agent) fetchAuthStatus(ctx context.Context) (acpx.AuthStatus, error) {
	a.mu.Lock()
	known := a.authSt
	a.mu.Unlock()
	if known != nil {
		return *known, nil
	}
	res, err := request[json.RawMessage](ctx, a, acpx.MethodAuthStatus, map[string]any{})
	if err != nil {
		return acpx.AuthStatus{}, a.describe(acpx.MethodAuthStatus, err)
	}
	st, err := acpx.ParseAuthStatus(res)
	if err != nil {
		return acpx.AuthStatus{}, err
	}
	a.mu.Lock()
	if a.authSt == nil { // an update that came meanwhile is newer
		a.authSt = &st
	}
	st = *a.authSt
	a.mu.Unlock()
	return st, nil
}

// showAuthStatus gives s's chat its agent's sign-in (the winbar shows
// it), where a reports it: what it pushed already (claude-agent-acp's
// _auth/status_update comes unasked), else auth/status asked once per
// agent process.
func (s *Session) showAuthStatus(ctx context.Context, a *Agent) {
	a.mu.Lock()
	known := a.authSt != nil
	a.mu.Unlock()
	if !known && !a.caps.AuthStatus {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, authStatusTimeout)
	defer cancel()
	st, err := a.fetchAuthStatus(ctx)
	if err != nil {
		s.log.Warn("auth/status", "err", err)
		return
	}
	s.emit(authStatusEvent(authTable(st), false))
}

// authStatusUpdate takes auth/status_update: the sign-in changed; every
// chat of a shows it.
func (a *Agent) authStatusUpdate(params json.RawMessage) {
	st, err := acpx.ParseAuthStatus(params)
	if err != nil {
		a.log.Warn("auth/status_update", "err", err)
		return
	}
	a.newAuthStatus(st)
}

// claudeAuthStatusUpdate takes claude-agent-acp's _auth/status_update
// (its extension before auth/status) as an auth/status_update.
func (a *Agent) claudeAuthStatusUpdate(params json.RawMessage) {
	st, err := acpx.ParseClaudeAuthStatus(params)
	if err != nil {
		a.log.Warn("_auth/status_update", "err", err)
		return
	}
	a.newAuthStatus(st)
}

// newAuthStatus keeps st as a's sign-in and shows it in every chat of a;
// a change from what it said before is said in the chat too.
func (a *Agent) newAuthStatus(st acpx.AuthStatus) {
	a.mu.Lock()
	changed := a.authSt != nil && !reflect.DeepEqual(*a.authSt, st)
	a.authSt = &st
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	for _, s := range sessions {
		s.emit(authStatusEvent(authTable(st), changed))
	}
}
