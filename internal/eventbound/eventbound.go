// Package eventbound bounds what one event carries from the host to
// Neovim over msgpack-RPC: nesting, items and string bytes.
package eventbound

import (
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// Bounds of what one event may carry to Neovim. Neovim's msgpack-RPC
// parser gives up on objects nested deeper than 32 levels and drops the
// channel with them (the host, and every session, dies); an event sits 4
// levels down in the nvim_exec_lua call that carries it, and Lua copies
// and walks what it gets, so events stay well under that.
const (
	MaxDepth   = 16       // maps and lists nested in an event, the event itself included
	MaxItems   = 50000    // map entries and list items in an event, plus a marker per list cut
	MaxBytes   = 16 << 20 // bytes of strings (keys included) in an event
	maxCutText = 2000     // bytes of JSON text kept for a value that was cut
)

// budget is what is left of an event's bounds while it is walked.
type budget struct {
	items, bytes int
}

// Bound makes ev fit the bounds above, in place: a map or list nested too
// deep, or past the item budget, becomes its JSON text (cut to maxCutText
// bytes with a marker), a list past the budget keeps its first items and
// ends with a marker, and strings past the byte budget are cut. It returns
// the bytes of ev's strings, which the host counts.
func Bound(ev map[string]any) int {
	b := budget{items: MaxItems, bytes: MaxBytes}
	boundMap(ev, 1, &b)
	return MaxBytes - b.bytes
}

func boundMap(m map[string]any, depth int, b *budget) {
	// Keys are paid for before any value is walked, so what a value may
	// use does not depend on the order maps are walked in.
	for k := range m {
		b.items--
		b.bytes -= len(k)
	}
	for k, v := range m {
		m[k] = boundValue(v, depth, b)
	}
}

// boundValue returns v within the bounds; depth is that of the container
// holding v.
func boundValue(v any, depth int, b *budget) any {
	switch t := v.(type) {
	case string:
		return boundString(t, b)
	case map[string]any:
		if depth >= MaxDepth || len(t) > b.items {
			return cutText(t, "nested too deep or too large", b)
		}
		boundMap(t, depth+1, b)
		return t
	case []any:
		if depth >= MaxDepth {
			return cutText(t, "nested too deep", b)
		}
		for i, x := range t {
			if b.items <= 0 || b.bytes <= 0 {
				rest := len(t) - i
				b.items--
				return append(t[:i], boundString(fmt.Sprintf("… %d more items (cut by nvim-acp)", rest), b))
			}
			b.items--
			t[i] = boundValue(x, depth+1, b)
		}
		return t
	case []map[string]any:
		// Kept as they are when they fit (Go code reads these types).
		if depth >= MaxDepth || len(t) > b.items {
			return boundValue(anySlice(t), depth, b)
		}
		for _, x := range t {
			b.items--
			if depth+1 >= MaxDepth || len(x) > b.items {
				return boundValue(anySlice(t), depth, b)
			}
			boundMap(x, depth+2, b)
		}
		return t
	case []string:
		if depth >= MaxDepth || len(t) > b.items {
			return boundValue(anySlice(t), depth, b)
		}
		for i, x := range t {
			b.items--
			t[i] = boundString(x, b)
		}
		return t
	}
	// A map type of its own (the host's Event): walked as a map.
	if r := reflect.ValueOf(v); r.Kind() == reflect.Map && r.Type().Key().Kind() == reflect.String &&
		r.Type().Elem().Kind() == reflect.Interface {
		if m, ok := r.Convert(reflect.TypeOf(map[string]any(nil))).Interface().(map[string]any); ok {
			return boundValue(m, depth, b)
		}
	}
	return v
}

// anySlice copies a typed slice into a []any.
func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// boundString cuts s to the bytes left, at a rune boundary, with a marker.
func boundString(s string, b *budget) string {
	if len(s) <= b.bytes {
		b.bytes -= len(s)
		return s
	}
	n := max(b.bytes-64, 0) // room for the marker
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	cut := s[:n] + fmt.Sprintf("… (%d bytes cut by nvim-acp)", len(s)-n)
	b.bytes -= len(cut)
	return cut
}

// cutText renders v as JSON text of at most maxCutText bytes, saying why.
func cutText(v any, why string, b *budget) string {
	j, err := json.Marshal(v)
	if err != nil {
		j = []byte(fmt.Sprintf("%v", v))
	}
	s := string(j)
	if len(s) > maxCutText {
		n := maxCutText
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	b.items--
	return boundString(s+" ("+why+"; cut by nvim-acp)", b)
}
