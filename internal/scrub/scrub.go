// Package scrub removes secrets (keys the user typed at a login prompt, an
// agent's API key) from what nvim-acp writes: its log, what it sends the
// chat, saved chats, error messages. A Set is seeded with each secret as it
// becomes known; every sink passes its text through the Set, which puts
// Mask where a secret was.
package scrub

import (
	"encoding/json"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Mask replaces a secret.
const Mask = "[secret]"

// MinLen is the length under which a value is not taken as a secret: a
// short value would match ordinary text everywhere.
const MinLen = 8

// Set is a set of secrets; it is safe for concurrent use, and the zero
// value is not: use New. A Set with no secret costs a load per call.
type Set struct {
	n atomic.Int32 // secrets added; 0: nothing to scrub

	mu      sync.RWMutex
	secrets []string
	r       *strings.Replacer
}

// New returns an empty Set.
func New() *Set { return &Set{} }

// Add makes secret one the Set scrubs, in the forms it takes in text: as
// is, escaped in a quoted Go string (the log's values) and in a JSON
// string. It reports whether secret was added (not too short, not there
// already).
func (s *Set) Add(secret string) bool {
	if len(secret) < MinLen {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.Contains(s.secrets, secret) {
		return false
	}
	s.secrets = append(s.secrets, secret)
	var forms []string
	for _, x := range s.secrets {
		quoted := strconv.Quote(x)
		j, _ := json.Marshal(x)
		forms = append(forms, x, quoted[1:len(quoted)-1], string(j[1:len(j)-1]))
	}
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) }) // the longest form wins
	forms = slices.Compact(forms)
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Mask)
	}
	s.r = strings.NewReplacer(pairs...)
	s.n.Store(int32(len(s.secrets)))
	return true
}

// Empty reports whether the Set has no secret.
func (s *Set) Empty() bool { return s == nil || s.n.Load() == 0 }

func (s *Set) replacer() *strings.Replacer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.r
}

// String returns text with every secret masked.
func (s *Set) String(text string) string {
	if s.Empty() || text == "" {
		return text
	}
	return s.replacer().Replace(text)
}

// Strings masks the secrets of each string of list, in place.
func (s *Set) Strings(list []string) []string {
	if s.Empty() {
		return list
	}
	r := s.replacer()
	for i, x := range list {
		list[i] = r.Replace(x)
	}
	return list
}

// Value masks the secrets in the strings inside v (maps, slices, structs,
// pointers, interfaces, nested): maps and slices are changed in place,
// structs and what pointers lead to are copied. It returns v, or its copy.
func (s *Set) Value(v any) any {
	if s.Empty() || v == nil {
		return v
	}
	r := s.replacer()
	rv, changed := scrubValue(r, reflect.ValueOf(v))
	if !changed {
		return v
	}
	return rv.Interface()
}

// scrubValue returns v with its strings masked, and whether anything was.
func scrubValue(r *strings.Replacer, v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		old := v.String()
		if masked := r.Replace(old); masked != old {
			return reflect.ValueOf(masked).Convert(v.Type()), true
		}
	case reflect.Interface:
		if v.IsNil() {
			break
		}
		if nv, ok := scrubValue(r, v.Elem()); ok {
			return nv, true
		}
	case reflect.Map:
		changed := false
		iter := v.MapRange()
		type kv struct{ k, v reflect.Value }
		var sets []kv
		for iter.Next() {
			if nv, ok := scrubValue(r, iter.Value()); ok {
				sets = append(sets, kv{iter.Key(), nv})
			}
		}
		for _, e := range sets {
			v.SetMapIndex(e.k, e.v)
			changed = true
		}
		return v, changed
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			old := string(v.Bytes())
			if masked := r.Replace(old); masked != old {
				return reflect.ValueOf([]byte(masked)).Convert(v.Type()), true
			}
			break
		}
		changed := false
		for i := 0; i < v.Len(); i++ {
			if nv, ok := scrubValue(r, v.Index(i)); ok {
				v.Index(i).Set(nv)
				changed = true
			}
		}
		return v, changed
	case reflect.Struct:
		var cp reflect.Value
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if nv, ok := scrubValue(r, v.Field(i)); ok {
				if !cp.IsValid() {
					cp = reflect.New(v.Type()).Elem()
					cp.Set(v)
				}
				cp.Field(i).Set(nv)
			}
		}
		if cp.IsValid() {
			return cp, true
		}
	case reflect.Pointer:
		if v.IsNil() {
			break
		}
		if nv, ok := scrubValue(r, v.Elem()); ok {
			p := reflect.New(v.Type().Elem())
			p.Elem().Set(nv)
			return p, true
		}
	}
	return v, false
}

// Writer returns a writer that masks the secrets of each Write before
// passing it on to w. A secret is caught when it is whole within one Write
// (a log handler writes a record at a time).
func (s *Set) Writer(w io.Writer) io.Writer { return &writer{s: s, w: w} }

type writer struct {
	s *Set
	w io.Writer
}

func (w *writer) Write(p []byte) (int, error) {
	if w.s.Empty() {
		return w.w.Write(p)
	}
	if _, err := io.WriteString(w.w, w.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
