package editormcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
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

// luaDiagnostics is the diagnostics query's Lua entry. It answers a table
// (msgpack: the texts are not escaped, nor scanned here).
const luaDiagnostics = "return require('acp.mcp.diagnostics').text(...)"

// Diagnostics implements Queries.
func (l *LuaQueries) Diagnostics(ctx context.Context, q DiagnosticsQuery) (DiagnosticFiles, error) {
	args := map[string]any{"root": q.Root, "limit": q.Limit}
	if q.Path != "" {
		args["path"] = q.Path
	}
	if q.MinSeverity > 0 {
		args["min_severity"] = q.MinSeverity
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultQueryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out DiagnosticFiles
	if err := l.Exec(ctx, luaDiagnostics, &out, args); err != nil {
		return DiagnosticFiles{}, fmt.Errorf("diagnostics: %w", err)
	}
	n := 0
	for _, f := range out.Files {
		if f.Path == "" || f.Count < 1 || !strings.HasSuffix(f.Text, "\n") {
			return DiagnosticFiles{}, fmt.Errorf("diagnostics: bad answer from Neovim (%q: %d lines in %d bytes)", f.Path, f.Count, len(f.Text))
		}
		n += f.Count
	}
	if q.Limit > 0 && n > q.Limit {
		return DiagnosticFiles{}, fmt.Errorf("diagnostics: bad answer from Neovim (%d lines, limit %d)", n, q.Limit)
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
