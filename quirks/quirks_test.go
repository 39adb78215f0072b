package quirks

import (
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

func TestQuirksByAgentInfo(t *testing.T) {
	gemini := &acp.Implementation{Name: "gemini-cli", Version: "0.61.0"}
	other := &acp.Implementation{Name: "qwen-code", Version: "0.24.4"}
	for _, tc := range []struct {
		info     *acp.Implementation
		override map[string]bool
		want     bool
	}{
		{gemini, nil, true},
		{other, nil, false},
		{nil, nil, false},
		{gemini, map[string]bool{MissingFileAsEmpty: false}, false},
		{other, map[string]bool{MissingFileAsEmpty: true}, true},
	} {
		if got := On(MissingFileAsEmpty, tc.info, tc.override); got != tc.want {
			t.Errorf("On(%+v, %v) = %v, want %v", tc.info, tc.override, got, tc.want)
		}
	}
	// Version ranges.
	saved := known
	defer func() { known = saved }()
	known = []agentQuirk{{Name: "q", Agent: "a", Min: "0.10", Max: "1.2.0"}}
	for v, want := range map[string]bool{"0.9.9": false, "0.10.0": true, "v1.2.0-rc1": true, "1.2.1": false, "": false} {
		if got := On("q", &acp.Implementation{Name: "a", Version: v}, nil); got != want {
			t.Errorf("version %q: %v, want %v", v, got, want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0.9", "0.10", -1}, {"1.0.0", "1", 0}, {"v2.6.0", "2.6.0", 0}, {"0.61.0-nightly", "0.61.0", 0}, {"1.10", "1.9.9", 1},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
