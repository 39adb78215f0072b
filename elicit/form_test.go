package elicit

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The schema claude-agent-acp sends for AskUserQuestion (its elicitation.js).
const askSchema = `{"type":"object","properties":{
	"question_0":{"type":"string","title":"Approach","oneOf":[
		{"const":"Small","title":"Small","description":"one file"},{"const":"Big","title":"Big"}]},
	"question_0_custom":{"type":"string","title":"Other","description":"Type your own answer"},
	"question_1":{"type":"array","title":"Targets","items":{"anyOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]}}}}`

func TestParseForm(t *testing.T) {
	f, err := ParseForm(json.RawMessage(askSchema))
	if err != nil {
		t.Fatal(err)
	}
	var names, kinds []string
	for _, x := range f.Fields {
		names, kinds = append(names, x.Name), append(kinds, x.Kind)
	}
	if strings.Join(names, ",") != "question_0,question_0_custom,question_1" || strings.Join(kinds, ",") != "enum,string,multi" {
		t.Fatalf("fields in the agent's order: %v %v", names, kinds)
	}
	if f.Fields[0].Options[0] != (Option{Value: "Small", Title: "Small", Description: "one file"}) {
		t.Fatalf("option %+v", f.Fields[0].Options[0])
	}

	all := `{"type":"object","required":["name","count"],"properties":{
		"name":{"type":"string","minLength":2,"maxLength":5,"default":"Bob"},
		"email":{"type":"string","format":"email"},
		"count":{"type":"integer","minimum":1,"maximum":10,"default":3},
		"ratio":{"type":"number","minimum":0,"maximum":1,"default":7},
		"ok":{"type":"boolean","default":true},
		"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"],"default":"blue"},
		"tags":{"type":"array","items":{"type":"string","enum":["x","y","z"]},"minItems":1,"maxItems":2,"default":["x"]}}}`
	f, err = ParseForm(json.RawMessage(all))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Field{}
	for _, x := range f.Fields {
		byName[x.Name] = x
	}
	if !byName["name"].Required || !byName["count"].Required || byName["email"].Required {
		t.Fatal("required flags")
	}
	defaults := map[string]any{"name": "Bob", "count": int64(3), "ok": true, "tags": []string{"x"}}
	for name, want := range defaults {
		if got := byName[name].Default; !reflect.DeepEqual(got, want) {
			t.Errorf("default of %s = %#v, want %#v", name, got, want)
		}
	}
	// Defaults that do not fit are dropped: 7 > maximum 1, "blue" not a choice.
	if byName["ratio"].Default != nil || byName["color"].Default != nil {
		t.Errorf("bad defaults kept: %v %v", byName["ratio"].Default, byName["color"].Default)
	}
	if byName["color"].Options[1] != (Option{Value: "green", Title: "Green"}) {
		t.Errorf("enumNames: %+v", byName["color"].Options)
	}

	for _, bad := range []string{`{"type":"array"}`, `{"properties":{"x":{"type":"object"}}}`,
		`{"properties":{"x":{"type":"array"}}}`, `{"properties":[1]}`, `nope`} {
		if _, err := ParseForm(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestFormCheck(t *testing.T) {
	f, err := ParseForm(json.RawMessage(`{"type":"object","required":["name"],"properties":{
		"name":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+$"},
		"email":{"type":"string","format":"email"},
		"day":{"type":"string","format":"date"},
		"count":{"type":"integer","minimum":1,"maximum":10},
		"ratio":{"type":"number","minimum":0,"maximum":1},
		"ok":{"type":"boolean"},
		"color":{"type":"string","oneOf":[{"const":"red","title":"Red"}]},
		"tags":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"},{"const":"y","title":"Y"}]},"maxItems":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		content map[string]any
		want    map[string]any
		err     string
	}{
		{"minimal", map[string]any{"name": "bob"}, map[string]any{"name": "bob"}, ""},
		{"every type, msgpack's ints", map[string]any{"name": "bob", "email": "a@b.io", "day": "2026-11-24", "count": int64(4),
			"ratio": 0.5, "ok": false, "color": "red", "tags": []any{"y", "y"}, "junk": 1},
			map[string]any{"name": "bob", "email": "a@b.io", "day": "2026-11-24", "count": int64(4), "ratio": 0.5, "ok": false,
				"color": "red", "tags": []string{"y"}}, ""},
		{"a whole float is an integer", map[string]any{"name": "bob", "count": 4.0}, map[string]any{"name": "bob", "count": int64(4)}, ""},
		{"empty optional fields are left out", map[string]any{"name": "bob", "email": "", "tags": []any{}},
			map[string]any{"name": "bob"}, ""},
		{"required", map[string]any{"email": "a@b.io"}, nil, "name is required"},
		{"required but empty", map[string]any{"name": ""}, nil, "name is required"},
		{"too short", map[string]any{"name": "b"}, nil, "at least 2 characters"},
		{"too long", map[string]any{"name": "bobbyb"}, nil, "at most 5 characters"},
		{"pattern", map[string]any{"name": "Bob"}, nil, "does not match"},
		{"email", map[string]any{"name": "bob", "email": "bob"}, nil, "not an email"},
		{"date", map[string]any{"name": "bob", "day": "24/11/2026"}, nil, "not a date"},
		{"not whole", map[string]any{"name": "bob", "count": 2.5}, nil, "not a whole number"},
		{"below minimum", map[string]any{"name": "bob", "count": int64(0)}, nil, "at least 1"},
		{"above maximum", map[string]any{"name": "bob", "ratio": 2.0}, nil, "at most 1"},
		{"number as text", map[string]any{"name": "bob", "ratio": "0.5"}, nil, "not a number"},
		{"boolean", map[string]any{"name": "bob", "ok": "yes"}, nil, "not true or false"},
		{"enum", map[string]any{"name": "bob", "color": "blue"}, nil, `"blue" is not one of the choices`},
		{"multi", map[string]any{"name": "bob", "tags": []any{"z"}}, nil, `"z" is not one of the choices`},
		{"multi max", map[string]any{"name": "bob", "tags": []any{"x", "y"}}, nil, "choose at most 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Check(tt.content)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %#v, %v\nwant %#v", got, err, tt.want)
			}
		})
	}
}

func TestInspectURL(t *testing.T) {
	tests := []struct {
		url   string
		host  string
		opens bool
		warn  string
	}{
		{"https://agent.example.com/connect?id=1", "agent.example.com", true, ""},
		{"http://localhost:8080/cb", "localhost", true, ""},
		{"http://example.com/x", "example.com", true, "not encrypted"},
		{"https://xn--pple-43d.com/login", "xn--pple-43d.com", true, "punycode"},
		{"https://github.com@evil.example/", "evil.example", true, "user name before the host"},
		{"https://10.0.0.1/", "10.0.0.1", true, "IP address"},
		{"file:///etc/passwd", "", false, "not a web address"},
		{"javascript://x/alert(1)", "x", false, "not a web page"},
		{"not a url", "", false, "not a web address"},
	}
	for _, tt := range tests {
		info := InspectURL(tt.url)
		w := strings.Join(info.Warnings, "; ")
		if info.Host != tt.host || info.Opens != tt.opens || (tt.warn == "") != (w == "") || !strings.Contains(w, tt.warn) {
			t.Errorf("%s: %+v, want host %q opens %v warning %q", tt.url, info, tt.host, tt.opens, tt.warn)
		}
	}
}
