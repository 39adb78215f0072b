package host

import (
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// fsRequest is an fs/read_text_file or fs/write_text_file request decoded
// by parseFSRequest.
type fsRequest struct {
	id         []byte // raw JSON: a number or a string; parseFSRequest's is a view of the line (cloned for a worker)
	method     string
	sessionID  string
	path       string
	line       *int
	limit      *int
	content    string
	hasContent bool
}

// knownKey reports whether k is one of keys, and refuses (ok false) a key
// that only matches one of them ignoring case: encoding/json would take it
// for that field, so the request is left to it.
func knownKey(k string, keys ...string) (known, ok bool) {
	for _, want := range keys {
		if k == want {
			return true, true
		}
		if strings.EqualFold(k, want) {
			return false, false
		}
	}
	return false, true
}

// parseFSRequest decodes line when it is a well-formed fs/read_text_file or
// fs/write_text_file request, in one pass. ok is false for everything
// else, and for any request it is not sure to decode exactly as
// encoding/json would: those go the ordinary way, through acp-go-sdk. A
// write's content that like (nil: none) finds like a text it has encoded
// is read against that encoding (jsontext.UnquoteLike).
func parseFSRequest(line []byte, like func(data []byte) *jsontext.Text) (req fsRequest, ok bool) {
	s := jsontext.NewScanner(line)
	var hasID, hasParams bool
	ok = s.Object(func(k string) bool {
		known, fine := knownKey(k, "jsonrpc", "id", "method", "params", "result", "error")
		if !fine {
			return false
		}
		if !known {
			return s.Skip()
		}
		switch k {
		case "jsonrpc":
			_, ok := s.StrAlias()
			return ok
		case "id":
			start := s.Peek()
			from := s.Pos()
			switch {
			case start == '"':
				if _, ok := s.Str(); !ok {
					return false
				}
			case start == '-' || (start >= '0' && start <= '9'):
				if _, ok := s.Number(); !ok {
					return false
				}
			default:
				return false
			}
			req.id = line[from:s.Pos():s.Pos()] // line's memory: see fsRequest.id
			hasID = true
			return true
		case "method":
			m, ok := s.StrAlias() // kept only as one of the constants below
			switch m {
			case acp.ClientMethodFsReadTextFile:
				req.method = acp.ClientMethodFsReadTextFile
			case acp.ClientMethodFsWriteTextFile:
				req.method = acp.ClientMethodFsWriteTextFile
			default:
				req.method = "" // not for the fast path
			}
			return ok
		case "params":
			hasParams = true
			return s.Object(func(k string) bool { return req.param(s, k, like) })
		}
		return false // result, error: not a request
	})
	if !ok || s.Peek() != 0 || !hasID || !hasParams || req.sessionID == "" || req.path == "" {
		return fsRequest{}, false
	}
	switch req.method {
	case acp.ClientMethodFsReadTextFile:
		return req, true
	case acp.ClientMethodFsWriteTextFile:
		return req, req.hasContent
	}
	return fsRequest{}, false
}

// param reads the value of params key k.
func (req *fsRequest) param(s *jsontext.Scanner, k string, like func(data []byte) *jsontext.Text) bool {
	known, ok := knownKey(k, "sessionId", "path", "line", "limit", "content")
	if !ok {
		return false
	}
	if !known {
		return s.Skip()
	}
	switch k {
	case "sessionId":
		req.sessionID, ok = s.Str()
	case "path":
		req.path, ok = s.Str()
	case "content":
		req.content, ok = s.StrLike(like)
		req.hasContent = ok
	case "line", "limit":
		var p *int
		if !s.Literal("null") {
			n, fine := s.Int()
			if !fine {
				return false
			}
			p = &n
		}
		ok = true
		if k == "line" {
			req.line = p
		} else {
			req.limit = p
		}
	}
	return ok
}
