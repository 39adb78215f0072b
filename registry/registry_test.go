package registry

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const testdataDir = "testdata/acp-registry"

// Every agent.json of the snapshot decodes, with the fields it holds.
func TestDecodeEveryAgentJSON(t *testing.T) {
	tests := []struct {
		id, name, version string
		kinds             []string
		npx, uvx          string // package
		args              []string
		platforms         int
		env               map[string]string
	}{
		{id: "auggie", name: "Auggie CLI", version: "0.15.0", kinds: []string{KindNpx}, npx: "@augmentcode/auggie@0.15.0", args: []string{"--acp"}, env: map[string]string{"AUGMENT_DISABLE_AUTO_UPDATE": "1"}},
		{id: "claude-code-acp", name: "Claude Code", version: "0.16.0", kinds: []string{KindNpx}, npx: "@zed-industries/claude-code-acp@0.16.0"},
		{id: "codex-acp", name: "Codex CLI", version: "0.9.2", kinds: []string{KindBinary}, platforms: 6},
		{id: "factory-droid", name: "Factory Droid", version: "0.56.3", kinds: []string{KindBinary}, platforms: 5, args: []string{"exec", "--output-format", "acp"}, env: map[string]string{"DROID_DISABLE_AUTO_UPDATE": "true", "FACTORY_DROID_AUTO_UPDATE_ENABLED": "false"}},
		{id: "gemini", name: "Gemini CLI", version: "0.27.3", kinds: []string{KindNpx}, npx: "@google/gemini-cli@0.27.3", args: []string{"--experimental-acp"}},
		{id: "github-copilot", name: "GitHub Copilot", version: "1.425.0", kinds: []string{KindNpx}, npx: "@github/copilot-language-server@1.425.0", args: []string{"--acp"}},
		{id: "kimi", name: "Kimi CLI", version: "1.9.0", kinds: []string{KindBinary}, platforms: 4, args: []string{"acp"}},
		{id: "mistral-vibe", name: "Mistral Vibe", version: "2.0.2", kinds: []string{KindBinary}, platforms: 6},
		{id: "opencode", name: "OpenCode", version: "1.1.53", kinds: []string{KindBinary}, platforms: 5, args: []string{"acp"}},
		{id: "qoder", name: "Qoder CLI", version: "0.1.26", kinds: []string{KindNpx}, npx: "@qoder-ai/qodercli@0.1.26", args: []string{"--acp"}},
		{id: "qwen-code", name: "Qwen Code", version: "0.9.1", kinds: []string{KindNpx}, npx: "@qwen-code/qwen-code@0.9.1", args: []string{"--acp", "--experimental-skills"}},
	}
	files, err := filepath.Glob(filepath.Join(testdataDir, "*", "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Fatalf("%d agent.json files, %d cases: every file needs a case", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testdataDir, tt.id, "agent.json"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := DecodeAgent(data)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != tt.id || a.Name != tt.name || a.Version != tt.version || a.Description == "" {
				t.Errorf("got id %q name %q version %q description %q", a.ID, a.Name, a.Version, a.Description)
			}
			if !reflect.DeepEqual(a.Kinds(), tt.kinds) {
				t.Errorf("kinds %v, want %v", a.Kinds(), tt.kinds)
			}
			if len(a.Distribution.Binary) != tt.platforms {
				t.Errorf("%d platforms, want %d", len(a.Distribution.Binary), tt.platforms)
			}
			var args []string
			var env map[string]string
			if p := a.Distribution.Npx; p != nil {
				if p.Package != tt.npx {
					t.Errorf("npx package %q, want %q", p.Package, tt.npx)
				}
				args, env = p.Args, p.Env
			}
			for plat, target := range a.Distribution.Binary {
				if !knownPlatform(plat) || !strings.HasPrefix(target.Archive, "https://") || !strings.HasPrefix(target.Cmd, "./") {
					t.Errorf("binary %s: %+v", plat, target)
				}
				args, env = target.Args, target.Env
			}
			if !reflect.DeepEqual(args, tt.args) || !reflect.DeepEqual(env, tt.env) {
				t.Errorf("args %q env %v, want %q %v", args, env, tt.args, tt.env)
			}
		})
	}
}

func TestDecodeAgentRejects(t *testing.T) {
	base := `"name":"N","version":"1.0.0","description":"D"`
	tests := []struct{ name, json, want string }{
		{"not json", `{`, "decode agent.json"},
		{"bad id", `{"id":"Bad_Id",` + base + `,"distribution":{"npx":{"package":"p@1.0.0"}}}`, "id \"Bad_Id\""},
		{"path id", `{"id":"../x",` + base + `,"distribution":{"npx":{"package":"p@1.0.0"}}}`, "id \"../x\""},
		{"no distribution", `{"id":"a",` + base + `}`, "no binary, npx or uvx"},
		{"empty distribution", `{"id":"a",` + base + `,"distribution":{}}`, "no binary, npx or uvx"},
		{"bad version", `{"id":"a","name":"N","version":"latest","description":"D","distribution":{"npx":{"package":"p"}}}`, "not a semantic version"},
		{"version escaping", `{"id":"a","name":"N","version":"1.0.0/../../x","description":"D","distribution":{"npx":{"package":"p"}}}`, "cannot name a directory"},
		{"empty package", `{"id":"a",` + base + `,"distribution":{"uvx":{"package":""}}}`, "uvx: package is empty"},
		{"option package", `{"id":"a",` + base + `,"distribution":{"npx":{"package":"--registry=evil"}}}`, "looks like an option"},
		{"unknown platform", `{"id":"a",` + base + `,"distribution":{"binary":{"plan9-mips":{"archive":"https://x/a.zip","cmd":"./a"}}}}`, "unknown platform"},
		{"no cmd", `{"id":"a",` + base + `,"distribution":{"binary":{"linux-x86_64":{"archive":"https://x/a.zip"}}}}`, "cmd is empty"},
		{"bad sha256", `{"id":"a",` + base + `,"distribution":{"binary":{"linux-x86_64":{"archive":"https://x/a.zip","cmd":"./a","sha256":"abc"}}}}`, "not 64 hex digits"},
		{"no name", `{"id":"a","version":"1.0.0","description":"D","distribution":{"npx":{"package":"p"}}}`, "name is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeAgent([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// The live schema's newer fields (website, license_url, sha256, FORMAT.md's
// cmd) decode; unknown ones are ignored.
func TestDecodeAgentNewerFields(t *testing.T) {
	a, err := DecodeAgent([]byte(`{"id":"fast-agent","name":"fast-agent","version":"0.10.1","description":"D",
		"website":"https://fast-agent.ai","license_url":"https://x/LICENSE","preview":{"version":"0.11.0-preview.1"},
		"distribution":{"uvx":{"package":"fast-agent-acp==0.10.1","cmd":"fast-agent-acp","args":["-x"],"env":{"FAST_AGENT_MODEL":"codexplan"}},
		"binary":{"linux-x86_64":{"archive":"https://x/a.tar.gz","sha256":"` + strings.Repeat("ab", 32) + `","cmd":"./a"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Website != "https://fast-agent.ai" || a.LicenseURL != "https://x/LICENSE" || a.Distribution.Uvx.Cmd != "fast-agent-acp" ||
		a.Distribution.Binary["linux-x86_64"].SHA256 != strings.Repeat("ab", 32) {
		t.Fatalf("decoded %+v", a)
	}
	if !reflect.DeepEqual(a.Kinds(), []string{KindBinary, KindUvx}) {
		t.Fatalf("kinds %v", a.Kinds())
	}
}

// A broken entry costs only itself; a document that is no registry fails.
func TestDecodeRegistry(t *testing.T) {
	r, err := Decode([]byte(`{"version":"1.0.0","agents":[
		{"id":"good","name":"G","version":"1.0.0","description":"D","distribution":{"npx":{"package":"g@1.0.0"}}},
		{"id":"bad","name":"B","version":"x","description":"D","distribution":{"npx":{"package":"b"}}},
		{"id":"good","name":"Dup","version":"1.0.0","description":"D","distribution":{"npx":{"package":"g@1.0.0"}}},
		"not an object"
	],"extensions":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Agents) != 1 || r.Agents[0].Name != "G" || len(r.Skipped) != 3 {
		t.Fatalf("agents %+v skipped %q", r.Agents, r.Skipped)
	}
	if _, ok := r.Agent("good"); !ok {
		t.Fatal("Agent(good) not found")
	}
	for _, doc := range []string{`[]`, `{"version":"1.0.0"}`, `nope`} {
		if _, err := Decode([]byte(doc)); err == nil {
			t.Errorf("Decode(%s) succeeded", doc)
		}
	}
}

// The bundled snapshot is what the agent.json files build (so it cannot
// drift from them), and decodes whole.
func TestBundledMatchesTestdata(t *testing.T) {
	built, err := Build(testdataDir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, bundled) {
		t.Fatal("snapshot/registry.json is not what testdata/acp-registry builds: run `go generate ./registry`")
	}
	r, err := Bundled()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Agents) != 11 || len(r.Skipped) != 0 {
		t.Fatalf("%d agents, skipped %q", len(r.Agents), r.Skipped)
	}
	a, _ := r.Agent("mistral-vibe")
	if a.Icon != IconBase+"/mistral-vibe.svg" {
		t.Fatalf("icon %q", a.Icon)
	}
}

func TestBuildRejectsMismatchedID(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "other"), 0o755)
	os.WriteFile(filepath.Join(dir, "other", "agent.json"), []byte(`{"id":"a","name":"N","version":"1.0.0","description":"D","distribution":{"npx":{"package":"p"}}}`), 0o644)
	if _, err := Build(dir); err == nil || !strings.Contains(err.Error(), "does not match its directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestPlatform(t *testing.T) {
	tests := []struct{ goos, goarch, want string }{
		{"linux", "amd64", "linux-x86_64"},
		{"linux", "arm64", "linux-aarch64"},
		{"darwin", "arm64", "darwin-aarch64"},
		{"darwin", "amd64", "darwin-x86_64"},
		{"windows", "amd64", "windows-x86_64"},
		{"windows", "arm64", "windows-aarch64"},
		{"linux", "386", ""},
		{"freebsd", "amd64", ""},
	}
	for _, tt := range tests {
		if got := Platform(tt.goos, tt.goarch); got != tt.want {
			t.Errorf("Platform(%s, %s) = %q, want %q", tt.goos, tt.goarch, got, tt.want)
		}
	}
}
