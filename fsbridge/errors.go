package fsbridge

import (
	"errors"
	"fmt"
	"io/fs"

	acp "github.com/coder/acp-go-sdk"
)

// JSON-RPC error codes used for the agent's errors.
const (
	CodeInvalidParams    = -32602
	CodeInternal         = -32603
	CodeResourceNotFound = -32002 // ACP "Resource not found"
	CodeCancelled        = -32800
)

// Reasons carried in RequestError.Data["reason"], stable for tests and UIs.
const (
	ReasonRelative       = "relative_path"
	ReasonNotFound       = "not_found"
	ReasonIsDir          = "is_directory"
	ReasonBinary         = "binary"
	ReasonTooLarge       = "too_large"
	ReasonPermission     = "permission_denied"
	ReasonRefused        = "refused_by_user"
	ReasonDeclined       = "declined_by_user"
	ReasonKeptMine       = "user_kept_their_version"
	ReasonLinePastEnd    = "line_past_end"
	ReasonBadRange       = "bad_range"
	ReasonEditorFailed   = "editor_error"
	ReasonIO             = "io_error"
	ReasonCancelled      = "cancelled"
	ReasonBufferChanging = "buffer_changing"
	ReasonNotRegular     = "not_regular_file"
	ReasonPathChanged    = "path_changed"
)

// ErrBufferChanged is what Editor.Apply returns (possibly wrapped) when the
// buffer's changedtick is no longer the one the hunks were computed for. The
// bridge then recomputes and retries.
var ErrBufferChanged = errors.New("buffer changed")

func reqErr(code int, path, reason, format string, args ...any) *acp.RequestError {
	return &acp.RequestError{
		Code:    code,
		Message: fmt.Sprintf(format, args...),
		Data:    map[string]any{"path": path, "reason": reason},
	}
}

// osErr converts an OS error about path into the agent's error.
func osErr(path string, err error) *acp.RequestError {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return reqErr(CodeResourceNotFound, path, ReasonNotFound, "file not found: %s", path)
	case errors.Is(err, fs.ErrPermission):
		return reqErr(CodeInternal, path, ReasonPermission, "permission denied by the OS: %s", path)
	default:
		return reqErr(CodeInternal, path, ReasonIO, "cannot access %s: %v", path, err)
	}
}

// ReasonOf returns the reason of an error returned by the bridge ("" if it
// carries none).
func ReasonOf(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		if m, ok := re.Data.(map[string]any); ok {
			s, _ := m["reason"].(string)
			return s
		}
	}
	return ""
}
