package acpx

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestParseProviders(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    []Provider
		wantErr bool
	}{
		{"claude-agent-acp's main", `{"providers":[{"providerId":"main","supported":["anthropic","bedrock"],"required":true,
			"current":{"apiType":"anthropic","baseUrl":"https://api.anthropic.com"}}]}`,
			[]Provider{{ID: "main", Supported: []string{"anthropic", "bedrock"}, Required: true,
				Current: &ProviderConfig{APIType: "anthropic", BaseURL: "https://api.anthropic.com"}}}, false},
		{"disabled, odd protocols skipped", `{"providers":[{"providerId":"openai","supported":["openai",3,""],"current":null}]}`,
			[]Provider{{ID: "openai", Supported: []string{"openai"}}}, false},
		{"entries without an id left out", `{"providers":[{"supported":[]},"x",{"providerId":"b"}]}`,
			[]Provider{{ID: "b", Supported: []string{}}}, false},
		{"none", `{"providers":[]}`, []Provider{}, false},
		{"not JSON", `<html>`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProviders(json.RawMessage(tt.raw))
			if (err != nil) != tt.wantErr || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
