package host

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/editormcp"
	"github.com/nvim-acp/nvim-acp/internal/acperr"
	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// requestHandler serves one request from the agent (after the gate's
// barrier, see Agent.handle).
type requestHandler func(ctx context.Context, a *Agent, params json.RawMessage) (any, *acp.RequestError)

// requests is every request the client serves, method -> handler: params
// decoded once into the method's SDK type, then served on the session they
// name. Any other request from the agent is -32601 at once.
var requests = map[string]requestHandler{
	acp.ClientMethodSessionRequestPermission: newRoute(asSent, (*Session).requestPermission).handle,
	acp.ClientMethodFsReadTextFile:           utf8Only(readFile.handle),
	acp.ClientMethodFsWriteTextFile:          utf8Only(writeFile.handle),
	acp.ClientMethodTerminalCreate:           newRoute(validated, (*Session).createTerminal).handle,
	acp.ClientMethodTerminalOutput:           newRoute(validated, (*Session).terminalOutput).handle,
	acp.ClientMethodTerminalWaitForExit:      newRoute(validated, (*Session).waitForTerminalExit).handle,
	acp.ClientMethodTerminalKill:             newRoute(validated, (*Session).killTerminal).handle,
	acp.ClientMethodTerminalRelease:          newRoute(validated, (*Session).releaseTerminal).handle,
	acpx.MethodElicitationCreate:             serveElicitation, // elicit.go
	editormcp.MethodMessage:                  serveMCPMessage,  // mcp.go: MCP-over-ACP
}

// notifications is every notification the client takes from the agent
// but session/update (the gate hands these over on its reading goroutine:
// they must not block). Any other is logged and dropped.
var notifications = map[string]func(a *Agent, params json.RawMessage){
	acpx.MethodElicitationComplete: (*Agent).elicitationComplete, // elicit.go
	// The agent's sign-in (authstatus.go).
	acpx.MethodAuthStatusUpdate:       (*Agent).authStatusUpdate,
	acpx.MethodClaudeAuthStatusUpdate: (*Agent).claudeAuthStatusUpdate,
}

// The fs/* routes, shared with the fast path (fastfs.go), which decodes
// its own params. Their params are not validated: an empty content is a
// valid write.
var (
	readFile  = newRoute(asSent, (*Session).serveRead)
	writeFile = newRoute(asSent, (*Session).serveWrite)
)

// utf8Only refuses fs/* params whose text is not valid UTF-8 (raw bytes,
// or a \u escape of half a surrogate pair), before they are decoded:
// encoding/json would put U+FFFD in their place, and the file written (or
// the path read) would silently not be what the agent sent. The fast path
// (fastfs.go) never takes such text, so every such request comes here.
func utf8Only(h requestHandler) requestHandler {
	return func(ctx context.Context, a *Agent, params json.RawMessage) (any, *acp.RequestError) {
		if at := jsontext.InvalidText(params); at >= 0 {
			return nil, acperr.New(acperr.InvalidParams, reasonNotUTF8, fmt.Sprintf(
				"the request's text is not valid UTF-8 (byte %d of its params): nothing was read or written; "+
					"fs/* carries UTF-8 text only (JSON strings), so send the text as UTF-8", at), nil)
		}
		return h(ctx, a, params)
	}
}

// Whether a route runs the SDK's Validate on the decoded params.
const (
	asSent    = false
	validated = true
)

// route serves requests whose params are a P (an SDK request type, or one
// embedding it) with serve, on the session P's SessionId names.
type route[P, R any] struct {
	serve    func(*Session, context.Context, P) (R, *acp.RequestError)
	validate bool
	session  []int // index of P's SessionId field
}

// newRoute returns the route of serve; it panics (at init) when P names
// no session.
func newRoute[P, R any](validate bool, serve func(*Session, context.Context, P) (R, *acp.RequestError)) route[P, R] {
	t := reflect.TypeFor[P]()
	f, ok := t.FieldByName("SessionId")
	if !ok || f.Type != reflect.TypeFor[acp.SessionId]() {
		panic(fmt.Sprintf("host: request type %v has no SessionId field", t))
	}
	return route[P, R]{serve: serve, validate: validate, session: f.Index}
}

// handle decodes params and serves them.
func (r route[P, R]) handle(ctx context.Context, a *Agent, params json.RawMessage) (any, *acp.RequestError) {
	var p P
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	res, rerr := r.call(ctx, a, p)
	if rerr != nil {
		return nil, rerr
	}
	return res, nil
}

// call serves decoded params p on the session they name.
func (r route[P, R]) call(ctx context.Context, a *Agent, p P) (R, *acp.RequestError) {
	var zero R
	id := acp.SessionId(reflect.ValueOf(&p).Elem().FieldByIndex(r.session).String())
	s := a.awaitSession(ctx, id) // one being created is waited for
	if s == nil {
		return zero, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %q", id)})
	}
	if v, ok := any(&p).(interface{ Validate() error }); ok && r.validate {
		if err := v.Validate(); err != nil {
			return zero, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
	}
	return r.serve(s, ctx, p)
}
