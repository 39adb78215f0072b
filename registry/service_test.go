package registry

import (
	"strings"
	"testing"
	"time"
)

func TestParseRegistryOptions(t *testing.T) {
	tests := []struct {
		in   any
		want serviceOptions
		err  string
	}{
		{in: nil},
		{in: []any{}},
		{in: map[string]any{"url": "http://x", "cache_dir": "/c", "data_dir": "/d", "timeout_ms": uint64(1500), "max_age_s": int64(60), "force": true, "kind": "npx"},
			want: serviceOptions{URL: "http://x", CacheDir: "/c", DataDir: "/d", Timeout: 1500 * time.Millisecond, MaxAge: time.Minute, Force: true, Kind: "npx"}},
		{in: map[string]any{"url": 3}, err: "url must be a string"},
		{in: map[string]any{"timeout_ms": "soon"}, err: "timeout_ms must be a number"},
		{in: "nope", err: "want a table"},
		{in: []any{"x"}, err: "want a table"},
	}
	for _, tt := range tests {
		got, err := parseServiceOptions(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parse(%v) err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parse(%v) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}
