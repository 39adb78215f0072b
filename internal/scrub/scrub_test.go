package scrub

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

const key = "sk-live-1234567890"

func TestString(t *testing.T) {
	s := New()
	if got := s.String("no secret yet: " + key); got != "no secret yet: "+key {
		t.Fatalf("an empty set changed text: %q", got)
	}
	for _, tc := range []struct {
		add  string
		want bool
	}{
		{key, true},
		{key, false},          // there already
		{"short", false},      // under MinLen
		{`pa"ss\wo rd`, true}, // quoted and escaped forms too
		{"sk-live-1234567890-and-more", true},
	} {
		if got := s.Add(tc.add); got != tc.want {
			t.Errorf("Add(%q) = %v, want %v", tc.add, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"key=" + key + ".", "key=[secret]."},
		{key + key, "[secret][secret]"},
		{"the longer one: sk-live-1234567890-and-more!", "the longer one: [secret]!"},
		{`log: "pa\"ss\\wo rd"`, `log: "[secret]"`},
		{"short stays short", "short stays short"},
		{"sk-live-12345678", "sk-live-12345678"}, // a part is no secret
	} {
		if got := s.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

type question struct {
	Title string
	Body  []string
	Ptr   *string
	n     string
}

func TestValue(t *testing.T) {
	s := New()
	s.Add(key)
	p := "ptr " + key
	q := question{Title: "t " + key, Body: []string{key}, Ptr: &p, n: key}
	ev := map[string]any{
		"type":  "message",
		"text":  "your key is " + key,
		"list":  []any{"a", map[string]any{"deep": key}},
		"lines": []string{"x", key},
		"raw":   json.RawMessage(`"` + key + `"`),
		"q":     q,
		"n":     42,
	}
	got := s.Value(ev).(map[string]any)
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), key) {
		t.Fatalf("a secret is left: %s", b)
	}
	if got["text"] != "your key is [secret]" || got["n"] != 42 {
		t.Fatalf("event %v", got)
	}
	if q.Title != "t "+key || p != "ptr "+key {
		t.Fatal("a struct or pointee the event shares was changed in place")
	}
	if gq := got["q"].(question); gq.n != key {
		t.Fatal("an unexported field changed")
	}
}

func TestWriterMasksLogRecords(t *testing.T) {
	s := New()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(s.Writer(&buf), nil))
	log.Info("before", "line", key)
	s.Add(key)
	log.Info("agent stderr", "line", "using "+key, "quoted", `a "`+key+`" b`)
	out := buf.String()
	if strings.Count(out, key) != 1 || !strings.Contains(out, `line="using [secret]"`) || !strings.Contains(out, `quoted="a \"[secret]\" b"`) {
		t.Fatalf("log:\n%s", out)
	}
}

func BenchmarkValueNoSecret(b *testing.B) {
	s := New()
	ev := map[string]any{"type": "chunk", "text": strings.Repeat("streamed text ", 4096)}
	for i := 0; i < b.N; i++ {
		s.Value(ev)
	}
}

func BenchmarkValueOneSecret(b *testing.B) {
	s := New()
	s.Add(key)
	ev := map[string]any{"type": "chunk", "text": strings.Repeat("streamed text ", 4096)}
	b.SetBytes(int64(len(ev["text"].(string))))
	for i := 0; i < b.N; i++ {
		s.Value(ev)
	}
}
