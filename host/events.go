package host

import (
	"context"
	"encoding/json"
	"errors"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/acpx"
	"github.com/nvim-acp/nvim-acp/chatsearch"
	"github.com/nvim-acp/nvim-acp/worktree"
)

// Events are the host's messages to the Lua UI, delivered in batches by UI
// (ui.go) to lua/acp/session/events.lua, which routes each by its "type" to one
// handler. Every event is built by one constructor below; Session.emit adds
// "sid". TestEventTypesHaveLuaHandlers checks that each type in eventTypes
// has a Lua handler and each Lua handler a type here.

// Event types.
const (
	EventChunk          = "chunk"            // streamed text of one kind; built by UI.Chunk
	EventUpdate         = "update"           // a session/update other than streamed text
	EventState          = "state"            // the session opened ("ready") or failed ("error")
	EventTurnEnd        = "turn_end"         // a prompt turn ended
	EventPermission     = "permission"       // a permission request for the user
	EventPermissionDone = "permission_done"  // a permission request was settled
	EventFsQuestion     = "fs_question"      // a question of the fs bridge for the user
	EventFsQuestionDone = "fs_question_done" // an fs question was settled
	EventResume         = "resume"           // the choice of a past session to load
	EventResumeDone     = "resume_done"      // the resume choice was settled
	EventTerminal       = "terminal"         // terminal/create started a command
	EventTerminalOutput = "terminal_output"  // raw PTY output; built by UI.Stream
	EventTerminalExit   = "terminal_exit"    // a terminal's command ended or was released
	EventFsWarning      = "fs_warning"       // a file the agent touched changed behind it
	EventMessage        = "message"          // a line for the chat
	EventModel          = "model"            // the model was switched
	EventAuth           = "auth"             // the agent needs a login: pick one of its methods
	EventAuthDone       = "auth_done"        // the auth question was settled
	EventReview         = "review"           // a file's pending changes of the agent's (review.go)
	EventRewound        = "rewound"          // a rewind or redo of files ended (checkpoint.go)
	EventSteer          = "steer"            // what became of a steered prompt
	EventRewindFork     = "rewind_fork"      // a rewind's fork of the session ended (rewindfork.go)
	// The agent's questions (elicitation/create), and their ends.
	EventElicitation         = "elicitation"          // a form or a link for the user
	EventElicitationDone     = "elicitation_done"     // an elicitation was settled
	EventElicitationComplete = "elicitation_complete" // the interaction behind a link ended
	EventRestart             = "restart"              // the agent crashed and is started again
	EventAuthStatus          = "auth_status"          // the agent's sign-in (auth/status, its updates)
	// A subagent's streamed text; kind is "<agent|thought>:<child session
	// id>" (subagent.go), merged as chunks are.
	EventSubagentChunk = "subagent_chunk"
	// ACP v2's background work (a state_update's snapshot, v2.go).
	EventBackground = "background"
	// ACP v2's foreground state where the chat has no turn of its own to
	// show it: work the agent started itself, the agent waiting for the
	// user (requires_action), and their end (v2.go).
	EventAgentState = "agent_state"
)

// eventTypes lists every event type the host sends.
var eventTypes = []string{
	EventChunk, EventUpdate, EventState, EventTurnEnd,
	EventPermission, EventPermissionDone, EventFsQuestion, EventFsQuestionDone,
	EventResume, EventResumeDone,
	EventTerminal, EventTerminalOutput, EventTerminalExit,
	EventFsWarning, EventMessage, EventModel,
	EventAuth, EventAuthDone, EventReview, EventRewound,
	EventAuth, EventAuthDone, EventSteer, EventRewindFork,
	EventElicitation, EventElicitationDone, EventElicitationComplete, EventRestart,
	EventSubagentChunk, EventBackground, EventAuthStatus, EventAgentState,
}

// Registry events (registry.go) carry no "sid": they belong to no session
// but to the agent registry UI (:AcpAgents, lua/acp/agents/registry.lua). They are
// kept out of eventTypes, which lists the types lua/acp/session/events.lua routes to
// a session's handler; events.lua routes these through its global table
// (TestRegistryEventTypesHaveGlobalLuaHandlers).
const (
	EventRegistryList      = "registry_list"      // acp_registry_refresh's result
	EventRegistryProgress  = "registry_progress"  // an install's progress
	EventRegistryInstalled = "registry_installed" // an install ended (ok or error)
)

// EventLifecycle ends a call on an agent outside any session
// (acp_agent_call: session/delete, logout); routed like the registry's.
const EventLifecycle = "lifecycle"

// EventHistorySearch is one saved chat's hits of a search of the saved
// chats, or its end (done); routed like the registry's (search.go).
const EventHistorySearch = "history_search"

// EventWorktree ends an acp_worktree_create (worktree.go): the tree made,
// or the error. It belongs to no session (the session starts once it has
// its tree).
const EventWorktree = "worktree"

// registryEventTypes lists the registry's event types, and the other
// events that belong to no session.
var registryEventTypes = []string{EventRegistryList, EventRegistryProgress, EventRegistryInstalled, EventLifecycle, EventHistorySearch, EventWorktree}

// registryListEvent is the result of refresh request id: list (see
// registry.go's List) or, when nothing could be loaded, err.
func registryListEvent(request int, list map[string]any, err error) Event {
	ev := Event{"agents": []any{}}
	if err != nil {
		ev["error"] = err.Error()
	} else {
		ev = Event(list)
	}
	ev["type"] = EventRegistryList
	ev["request"] = request
	return ev
}

// historySearchEvent is search request's hits in chat c, or its end: sum
// and, when it failed, err.
func historySearchEvent(request int, c *chatsearch.Chat, sum *chatsearch.Summary, err error) Event {
	ev := Event{"type": EventHistorySearch, "request": request}
	if c != nil {
		ev["chat"] = c
		return ev
	}
	ev["done"] = true
	if sum != nil {
		ev["chats"], ev["hits"], ev["truncated"] = sum.Chats, sum.Hits, sum.Truncated
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		ev["error"] = err.Error()
	}
	if errors.Is(err, context.Canceled) {
		ev["cancelled"] = true
	}
	return ev
}

// registryProgressEvent reports install's progress on agent id.
func registryProgressEvent(install int, id, phase string, bytes, total int64) Event {
	return Event{"type": EventRegistryProgress, "install": install, "id": id, "phase": phase, "bytes": bytes, "total": total}
}

// registryInstalledEvent ends install of agent id: the agent spec, or err.
func registryInstalledEvent(install int, id string, spec map[string]any, err error) Event {
	ev := Event{"type": EventRegistryInstalled, "install": install, "id": id, "ok": err == nil}
	if err != nil {
		ev["error"] = err.Error()
	} else {
		ev["agent"] = spec
	}
	return ev
}

// question is a kind of question the user answers: the event that asks it,
// the event that says it is settled, and the RPC method Lua answers it with.
type question struct {
	ask, done, answer string
}

// The questions the host asks; each is answered with its own RPC method.
var (
	permissionQuestion = question{EventPermission, EventPermissionDone, "acp_answer_permission"}
	fsQuestion         = question{EventFsQuestion, EventFsQuestionDone, "acp_answer_fs_question"}
	resumeQuestion     = question{EventResume, EventResumeDone, "acp_answer_resume"}
	authQuestion       = question{EventAuth, EventAuthDone, "acp_answer_auth"}
	elicitQuestion     = question{EventElicitation, EventElicitationDone, "acp_answer_elicitation"}
)

// messageStartEvent says the next chunk of kind starts another message of
// the agent (a new messageId): the chat starts a new paragraph.
func messageStartEvent(kind string) Event {
	return Event{"type": EventChunk, "kind": kind, "new_message": true}
}

// updateEvent carries one session/update (cleaned for msgpack); a tool
// call's gets its command line (withCommandLine).
func updateEvent(update map[string]any) Event {
	if k := update["sessionUpdate"]; k == "tool_call" || k == "tool_call_update" {
		withCommandLine(update)
	}
	return Event{"type": EventUpdate, "update": update}
}

// modeUpdateEvent is a current_mode_update for a mode reported another way
// (gemini's "[MODE_UPDATE]" text, or session/set_mode answered).
func modeUpdateEvent(mode string) Event {
	return updateEvent(map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": mode})
}

// readyEvent says the session opened: the agent's session id, the
// session/new (or load) response, agentInfo and prompt capabilities.
func readyEvent(sessionID string, info, agentInfo, promptCaps map[string]any, caps acpx.Agent) Event {
	return Event{"type": EventState, "state": "ready", "session_id": sessionID,
		"info": info, "agent_info": agentInfo, "prompt_capabilities": promptCaps, "load_session": caps.LoadSession,
		"caps": caps.Table()}
}

// initializedEvent says the agent answered initialize: what it says it is
// (agentInfo), so that what it sends before session/new's answer is headed
// by its name.
func initializedEvent(agentInfo map[string]any) Event {
	return Event{"type": EventState, "state": "initialized", "agent_info": agentInfo}
}

// errorEvent says the session failed; the chat shows err.
func errorEvent(err error) Event {
	return Event{"type": EventState, "state": "error", "error": err.Error()}
}

// rewindForkEvent says how a rewind's fork of the session ended
// (rewindfork.go): in agent session id, or err.
func rewindForkEvent(id acp.SessionId, err error) Event {
	if err != nil {
		return Event{"type": EventRewindFork, "error": err.Error()}
	}
	return Event{"type": EventRewindFork, "ok": true, "session_id": string(id)}
}

// turnEndEvent says a turn ended with stopReason, and the tokens it took
// when the agent says (PromptResponse.usage).
func turnEndEvent(stopReason string, usage *acp.Usage) Event {
	ev := Event{"type": EventTurnEnd, "stop_reason": stopReason}
	if u := acpx.UsageTable(usage); u != nil {
		ev["usage"] = u
	}
	return ev
}

// steerEvent says what became of a prompt steered into the running turn
// (acpx's outcomes), or why it could not be.
func steerEvent(outcome string, err error) Event {
	ev := Event{"type": EventSteer, "outcome": outcome}
	if err != nil {
		ev["error"] = err.Error()
	}
	return ev
}

// turnErrorEvent says a turn ended with an error.
func turnErrorEvent(err error) Event {
	return Event{"type": EventTurnEnd, "error": err.Error()}
}

// permissionEvent asks the user a RequestPermissionRequest-shaped request
// (the agent's, or the client's own with "client_question" set); its tool
// call gets its command line (withCommandLine).
func permissionEvent(request map[string]any) Event {
	if tc, ok := request["toolCall"].(map[string]any); ok {
		withCommandLine(tc)
	}
	return Event{"type": EventPermission, "request": request}
}

// clientKey is the key of what the host adds to a tool call it sends the
// UI: {command = the command line it runs, runs = true} (withCommandLine).
// An agent's own value under this key is dropped.
const clientKey = "_nvim_acp"

// withCommandLine sets tc[clientKey] from tc's rawInput: the command line
// the tool call runs, computed once here (approval.CommandLine) so that
// a rule the UI saves or matches (lua/acp/rules/init.lua) is the line consent
// approves. "runs" is true when rawInput names a command at all, even one
// that cannot be read as a line (an argv that is not all strings). A tool
// call without rawInput gets no key: an update leaves the tool call's
// rawInput, and so its command line, as they were.
func withCommandLine(tc map[string]any) {
	delete(tc, clientKey)
	raw, ok := tc["rawInput"]
	if !ok {
		return
	}
	in, _ := raw.(map[string]any)
	info := map[string]any{}
	if line, ok := rawCommand(in); ok {
		info["command"] = line
		info["runs"] = true
	} else if namesCommand(in) {
		info["runs"] = true
	}
	tc[clientKey] = info
}

// namesCommand reports whether rawInput in names a command ("command" or
// "cmd": a string, or a non-empty list), readable or not.
func namesCommand(in map[string]any) bool {
	c, ok := in["command"]
	if !ok {
		c = in["cmd"]
	}
	switch c := c.(type) {
	case string:
		return true
	case []any:
		return len(c) > 0
	}
	return false
}

// authEvent asks how to log in to agent (label: what the agent says it
// is): one of methods (auth.go), why saying what went wrong so far.
func authEvent(agent, label string, methods []authMethod, why string) Event {
	list := make([]map[string]any, 0, len(methods))
	for _, m := range methods {
		b, _ := json.Marshal(m)
		var v map[string]any
		_ = json.Unmarshal(b, &v)
		list = append(list, v)
	}
	return Event{"type": EventAuth, "agent": agent, "label": label, "methods": list, "error": why}
}

// elicitationEvent asks the user the agent's question e: shown is its
// form (elicit.Form) or its link (elicit.URLInfo) as the UI draws it.
func elicitationEvent(e acpx.Elicitation, shown map[string]any) Event {
	ev := Event{"type": EventElicitation, "mode": e.Mode, "message": e.Message}
	if e.ToolCallID != "" {
		ev["tool_call_id"] = e.ToolCallID
	}
	if e.Mode == acpx.ModeURL {
		ev["url"] = shown
	} else {
		ev["form"] = shown
	}
	return ev
}

// elicitationCompleteEvent says the interaction behind url elicitation id
// ended (wasOpen: its question was still open, and is closed now).
func elicitationCompleteEvent(id string, wasOpen bool) Event {
	return Event{"type": EventElicitationComplete, "elicitation_id": id, "was_open": wasOpen}
}

// fsQuestionEvent asks the user a question of the fs bridge.
func fsQuestionEvent(q any) Event {
	return Event{"type": EventFsQuestion, "question": q}
}

// resumeEvent asks which past session to load ({id, cwd, title?, updated_at?};
// empty: the agent cannot list them, the user types an id); more: the
// agent has more (the answer moreSessions asks for them).
func resumeEvent(sessions []map[string]any, more bool) Event {
	return Event{"type": EventResume, "sessions": sessions, "more": more, "more_choice": moreSessions}
}

// restartEvent says the session's agent exited (err) and is started again,
// the attempt-th time of at most max.
func restartEvent(err error, attempt, max int) Event {
	return Event{"type": EventRestart, "error": err.Error(), "attempt": attempt, "max": max}
}

// lifecycleEvent ends an acp_agent_call (method "delete" or "logout") on
// agent: its error, or none. It belongs to no session.
func lifecycleEvent(method, agent, sessionID string, err error) Event {
	ev := Event{"type": EventLifecycle, "method": method, "agent": agent, "session_id": sessionID}
	if err != nil {
		ev["error"] = err.Error()
	}
	return ev
}

// worktreeEvent ends acp_worktree_create id: tree, or err.
func worktreeEvent(id int, tree worktree.Tree, err error) Event {
	ev := Event{"type": EventWorktree, "id": id}
	if err != nil {
		ev["error"] = err.Error()
	} else {
		ev["tree"] = tree
		if tree.SpareErr != nil {
			ev["note"] = "the spare worktree could not be used (" + tree.SpareErr.Error() + "): checked out anew"
		}
	}
	return ev
}

// doneEvent says question id of kind q is settled (answered or not).
func doneEvent(q question, id int) Event {
	return Event{"type": q.done, "id": id}
}

// terminalEvent says terminal id started command line in cwd.
func terminalEvent(id, line, cwd string) Event {
	return Event{"type": EventTerminal, "id": id, "command": line, "cwd": cwd}
}

// terminalExitEvent says terminal id's command ended with an exit code or
// a signal (id is set when the event is queued, see terminal.Pump.Exit).
func terminalExitEvent(exitCode *int, signal string) Event {
	ev := Event{"type": EventTerminalExit}
	if exitCode != nil {
		ev["exit_code"] = *exitCode
	} else {
		ev["signal"] = signal
	}
	return ev
}

// terminalReleasedEvent says terminal id was released before it ended.
func terminalReleasedEvent(id string) Event {
	return Event{"type": EventTerminalExit, "id": id, "released": true}
}

// fsWarningEvent tells the user about a file the agent touched.
func fsWarningEvent(text string) Event {
	return Event{"type": EventFsWarning, "text": text}
}

// backgroundEvent lists a v2 session's background work: items, each
// {type, id, title} (v2.go).
func backgroundEvent(items []map[string]any) Event {
	return Event{"type": EventBackground, "items": items}
}

// agentStateEvent is a v2 session's foreground state (running,
// requires_action, idle with its stop reason); own: foreground work the
// agent started, no prompt of the client's in flight (v2.go).
func agentStateEvent(state, stopReason string, own bool) Event {
	ev := Event{"type": EventAgentState, "state": state, "own": own}
	if stopReason != "" {
		ev["stop_reason"] = stopReason
	}
	return ev
}

// messageEvent is a line for the chat at level "info", "warn" or "error".
func messageEvent(level, text string) Event {
	return Event{"type": EventMessage, "level": level, "text": text}
}

// authStatusEvent says the agent's sign-in (authstatus.go: authTable's
// state and accounts); changed: it told of a change (auth/status_update),
// which the chat says too.
func authStatusEvent(st map[string]any, changed bool) Event {
	ev := Event{"type": EventAuthStatus, "changed": changed}
	for k, v := range st {
		ev[k] = v
	}
	return ev
}

// modelEvent says the model is now modelID.
func modelEvent(modelID string) Event {
	return Event{"type": EventModel, "model_id": modelID}
}

// rewoundEvent says what a rewind (redo: a redo) of files did, or why it
// failed (checkpoint.go).
func rewoundEvent(redo bool, res any, err error) Event {
	ev := Event{"type": EventRewound, "redo": redo, "result": res}
	if err != nil {
		ev["error"] = err.Error()
	}
	return ev
}

// rewindPlanEvent: the plan of a preview asked with token (or why there
// is none), planned in the background (checkpoint.go).
func rewindPlanEvent(token int, p any, err error) Event {
	ev := Event{"type": EventRewound, "token": token, "plan": p}
	if err != nil {
		ev["plan_error"] = err.Error()
	}
	return ev
}

// rewindAskEvent: a rewind without a preview found overlaps with the
// user's changes in n files: the user settles them (checkpoint.go).
func rewindAskEvent(n int) Event {
	return Event{"type": EventRewound, "ask": n}
}

// reviewEvent carries one file's pending changes of the agent's
// (review.go).
func reviewEvent(file any) Event {
	return Event{"type": EventReview, "file": file}
}
