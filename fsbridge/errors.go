package fsbridge

import (
	"errors"
	"fmt"
	"io/fs"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/internal/acperr"
)

// JSON-RPC error codes used for the agent's errors.
const (
	CodeInvalidParams    = acperr.InvalidParams
	CodeInternal         = acperr.Internal
	CodeResourceNotFound = acperr.ResourceNotFound // ACP "Resource not found"
	CodeCancelled        = acperr.Cancelled
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

// reqErr is the agent's error about path (acperr.New with the path in its
// data).
func reqErr(code int, path, reason, format string, args ...any) *acp.RequestError {
	return acperr.New(code, reason, fmt.Sprintf(format, args...), map[string]any{"path": path})
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
func ReasonOf(err error) string { return acperr.ReasonOf(err) }
