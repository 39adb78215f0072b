package host

import (
	"bytes"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// fsRequest is an fs/read_text_file or fs/write_text_file request decoded
// by parseFSRequest.
type fsRequest struct {
	id         []byte // raw JSON: a number or a string; parseFSRequest's is a view of the line (cloned for a worker)
	idAt       int    // where id starts in the line parsed
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
			req.idAt = from
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

// readMemo is the last read request parsed, kept by its bytes around the
// id: an agent reading a file again sends the same line but for the id,
// and the same bytes parse the same. Only lines whose id is a number of
// digits are kept and matched: such an id ends where a digit does not
// follow, so any other number of digits in its place parses alike.
type readMemo struct {
	head, tail []byte    // the line before and after the id
	req        fsRequest // its parse, but for the id
}

// rememberRead keeps line's parse req in m when it is a read whose id is
// a number of digits.
func (m *readMemo) rememberRead(line []byte, req fsRequest) {
	if req.method != acp.ClientMethodFsReadTextFile || !digits(req.id) {
		return
	}
	m.head = append(m.head[:0], line[:req.idAt]...)
	m.tail = append(m.tail[:0], line[req.idAt+len(req.id):]...)
	req.id = nil
	m.req = req
}

// parse is parseFSRequest's result for a line that is the kept one but
// for its id, a number of digits (ok false for any other line).
func (m *readMemo) parse(line []byte) (req fsRequest, ok bool) {
	if m.head == nil || len(line) <= len(m.head)+len(m.tail) || !bytes.HasPrefix(line, m.head) || !bytes.HasSuffix(line, m.tail) {
		return fsRequest{}, false
	}
	id := line[len(m.head) : len(line)-len(m.tail)]
	if !digits(id) {
		return fsRequest{}, false
	}
	req = m.req
	req.id, req.idAt = id[:len(id):len(id)], len(m.head)
	if req.line != nil {
		n := *req.line
		req.line = &n
	}
	if req.limit != nil {
		n := *req.limit
		req.limit = &n
	}
	return req, true
}

// digits reports whether id is a JSON number of digits only (no sign,
// fraction or exponent, no leading zero).
func digits(id []byte) bool {
	if len(id) == 0 || len(id) > 1 && id[0] == '0' {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
