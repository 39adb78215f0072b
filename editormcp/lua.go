package editormcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/jsontext"
)

// LuaQueries implements Queries in Neovim through lua/acp/mcp/queries.lua:
// each query is one call of its query(name, args, id), which answers with
// JSON at once, or later through Reply(id, json) (language server requests:
// Neovim never waits for them).
type LuaQueries struct {
	// Exec runs Lua code in Neovim with args and decodes its result.
	Exec func(ctx context.Context, code string, result any, args ...any) error
	// Timeout bounds a query (default DefaultQueryTimeout).
	Timeout time.Duration

	mu      sync.Mutex
	next    int
	waiting map[int]chan string
}

// luaQuery is the Lua side's entry.
const luaQuery = "return require('acp.mcp.queries').query(...)"

// DefaultQueryTimeout bounds a query: a language server's first answer
// waits for it to load the workspace.
const DefaultQueryTimeout = 30 * time.Second

// luaAnswer is query's answer.
type luaAnswer struct {
	Pending bool            `json:"pending"`
	Error   string          `json:"error"`
	Result  json.RawMessage `json:"result"`
}

// query runs query name with args (as JSON) and decodes its result into out.
func (l *LuaQueries) query(ctx context.Context, name string, args any, out any) error {
	return l.queryWith(ctx, name, args, func(b []byte) error { return json.Unmarshal(b, out) })
}

// queryWith runs query name with args (as JSON) and decodes its result with
// decode.
func (l *LuaQueries) queryWith(ctx context.Context, name string, args any, decode func([]byte) error) error {
	l.mu.Lock()
	if l.waiting == nil {
		l.waiting = map[int]chan string{}
	}
	l.next++
	id := l.next
	ch := make(chan string, 1)
	l.waiting[id] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waiting, id)
		l.mu.Unlock()
	}()
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var raw string
	if err := l.Exec(ctx, luaQuery, &raw, name, string(in), id); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	a, err := decodeAnswer(raw)
	if err != nil {
		return fmt.Errorf("%s: bad answer from Neovim: %w", name, err)
	}
	if a.Pending {
		select {
		case raw = <-ch:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s: no answer within %v (is a language server attached and responsive?)", name, timeout)
			}
			return ctx.Err()
		}
		if a, err = decodeAnswer(raw); err != nil {
			return fmt.Errorf("%s: bad answer from Neovim: %w", name, err)
		}
	}
	if a.Error != "" {
		return errors.New(a.Error)
	}
	if len(a.Result) == 0 {
		return nil
	}
	if err := decode(a.Result); err != nil {
		return fmt.Errorf("%s: bad answer from Neovim: %w", name, err)
	}
	return nil
}

// decodeAnswer reads query's answer. The usual one, {"result":...} (as
// vim.json.encode writes it), is not scanned here: its result is.
func decodeAnswer(raw string) (luaAnswer, error) {
	const head = `{"result":`
	if len(raw) > len(head)+1 && raw[:len(head)] == head && raw[len(raw)-1] == '}' {
		return luaAnswer{Result: json.RawMessage(raw[len(head) : len(raw)-1])}, nil
	}
	var a luaAnswer
	err := json.Unmarshal([]byte(raw), &a)
	return a, err
}

// Reply delivers the answer of asynchronous query id (late answers are
// dropped).
func (l *LuaQueries) Reply(id int, answer string) {
	l.mu.Lock()
	ch := l.waiting[id]
	l.mu.Unlock()
	if ch != nil {
		select {
		case ch <- answer:
		default:
		}
	}
}

// luaDiagnostics is the diagnostics query's answer: each path once.
type luaDiagnostics struct {
	Paths []string  `json:"paths"`
	Items []luaDiag `json:"items"`
}

type luaDiag struct {
	P, L, C, S int
	M          string `json:"m"`
	Src        string `json:"src"`
	Code       string `json:"code"`
}

// decode reads the answer with jsontext's scanner (1,000 diagnostics are
// most of the tool's time in encoding/json), or encoding/json when the
// scanner does not take it.
func (r *luaDiagnostics) decode(data []byte) error {
	if r.scan(jsontext.NewScanner(data)) {
		return nil
	}
	*r = luaDiagnostics{}
	return json.Unmarshal(data, r)
}

func (r *luaDiagnostics) scan(s *jsontext.Scanner) bool {
	list := func(item func() bool) bool {
		if !s.Consume('[') {
			return s.Object(func(string) bool { return false }) // {}: an empty list
		}
		if s.Consume(']') {
			return true
		}
		for {
			if !item() {
				return false
			}
			if s.Consume(']') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	}
	return s.Object(func(key string) bool {
		switch key {
		case "paths":
			return list(func() bool {
				p, ok := s.Str()
				r.Paths = append(r.Paths, p)
				return ok
			})
		case "items":
			return list(func() bool {
				var d luaDiag
				ok := s.Object(func(k string) bool {
					var ok bool
					switch k {
					case "p":
						d.P, ok = s.Int()
					case "l":
						d.L, ok = s.Int()
					case "c":
						d.C, ok = s.Int()
					case "s":
						d.S, ok = s.Int()
					case "m":
						d.M, ok = s.Str()
					case "src":
						d.Src, ok = s.Str()
					case "code":
						d.Code, ok = s.Str()
					default:
						ok = s.Skip()
					}
					return ok
				})
				r.Items = append(r.Items, d)
				return ok
			})
		}
		return s.Skip()
	}) && s.Peek() == 0
}

// Diagnostics implements Queries.
func (l *LuaQueries) Diagnostics(ctx context.Context, q DiagnosticsQuery) ([]Diagnostic, error) {
	var r luaDiagnostics
	if err := l.queryWith(ctx, "diagnostics", q, r.decode); err != nil {
		return nil, err
	}
	out := make([]Diagnostic, 0, len(r.Items))
	for _, it := range r.Items {
		if it.P < 1 || it.P > len(r.Paths) {
			return nil, fmt.Errorf("diagnostics: bad answer from Neovim (path %d of %d)", it.P, len(r.Paths))
		}
		out = append(out, Diagnostic{Path: r.Paths[it.P-1], Line: it.L, Col: it.C, Severity: it.S, Message: it.M, Source: it.Src, Code: it.Code})
	}
	return out, nil
}

// Symbols implements Queries.
func (l *LuaQueries) Symbols(ctx context.Context, q SymbolsQuery) ([]Symbol, error) {
	var out []Symbol
	return out, l.query(ctx, "symbols", q, &out)
}

// Definition implements Queries.
func (l *LuaQueries) Definition(ctx context.Context, p Position) ([]Location, error) {
	var out []Location
	return out, l.query(ctx, "definition", p, &out)
}

// References implements Queries.
func (l *LuaQueries) References(ctx context.Context, p Position) ([]Location, error) {
	var out []Location
	return out, l.query(ctx, "references", p, &out)
}

// Hover implements Queries.
func (l *LuaQueries) Hover(ctx context.Context, p Position) (string, error) {
	var out string
	return out, l.query(ctx, "hover", p, &out)
}

// Buffers implements Queries.
func (l *LuaQueries) Buffers(ctx context.Context) ([]Buffer, error) {
	var out []Buffer
	return out, l.query(ctx, "buffers", map[string]any{}, &out)
}

// Selection implements Queries.
func (l *LuaQueries) Selection(ctx context.Context) (Selection, error) {
	var out Selection
	return out, l.query(ctx, "selection", map[string]any{}, &out)
}

// Quickfix implements Queries.
func (l *LuaQueries) Quickfix(ctx context.Context) ([]QuickfixItem, error) {
	var out []QuickfixItem
	return out, l.query(ctx, "quickfix", map[string]any{}, &out)
}
