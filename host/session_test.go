package host

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestCleanDropsNulls(t *testing.T) {
	var v map[string]any
	in := `{"a":null,"b":{"c":null,"d":1},"e":[null,{"f":null,"g":"x"},[null,2]],"h":"keep"}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	got := clean(v)
	want := map[string]any{"b": map[string]any{"d": 1.0}, "e": []any{map[string]any{"g": "x"}, []any{2.0}}, "h": "keep"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("clean = %#v\nwant %#v", got, want)
	}
}

func TestModeMarker(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"[MODE_UPDATE] yolo", "yolo"},
		{"  [MODE_UPDATE] auto_edit\n", "auto_edit"},
		{"text [MODE_UPDATE] yolo", ""},
		{"[MODE_UPDATE] two words", ""},
	} {
		m := modeMarker.FindStringSubmatch(tc.text)
		got := ""
		if m != nil {
			got = m[1]
		}
		if got != tc.want {
			t.Errorf("modeMarker(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
