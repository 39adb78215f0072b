package host

// The host's own errors to the agent are built with acperr.New and a
// reason (Data["reason"]): fs/* errors come from fsbridge with its
// reasons, terminal/* errors from terminal (terminal.RequestError, ...);
// protocol errors (unknown method, params that do not decode, an unknown
// session) with acp-go-sdk's constructors (dispatch.go).
const reasonNotUTF8 = "not_utf8"
