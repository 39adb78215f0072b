package host

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

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

// authStatus asks a auth/status, when it has it.
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
	if !a.caps.AuthStatus {
		return r
	}
	r["supported"] = true
	res, err := acp.SendRequest[json.RawMessage](a.conn, ctx, acpx.MethodAuthStatus, map[string]any{})
	if err != nil {
		r["error"] = a.describe(acpx.MethodAuthStatus, err).Error()
		return r
	}
	st, err := acpx.ParseAuthStatus(res)
	if err != nil {
		r["error"] = err.Error()
		return r
	}
	r["state"] = st.State
	accounts := make([]map[string]any, 0, len(st.Accounts))
	for _, ac := range st.Accounts {
		m := map[string]any{"label": ac.Label}
		if ac.Active != nil {
			m["active"] = *ac.Active
		}
		accounts = append(accounts, m)
	}
	r["accounts"] = accounts
	return r
}
