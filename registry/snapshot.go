package registry

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// The bundled snapshot is snapshot/registry.json, built from the agent.json
// files under testdata/acp-registry (a copy of the registry repository's
// data, Apache-2.0, see snapshot/LICENSE and snapshot/README.md). Refresh it
// with one of:
//
//	go generate ./registry   # from testdata/acp-registry
//	go run ./registry/internal/snapshotgen -url DefaultURL \
//	    -dir registry/testdata/acp-registry -out registry/snapshot/registry.json
//
//go:generate go run ./internal/snapshotgen -dir testdata/acp-registry -out snapshot/registry.json

//go:embed snapshot/registry.json
var bundled []byte

var bundledOnce = sync.OnceValues(func() (*Registry, error) {
	r, err := Decode(bundled)
	if err != nil {
		return nil, fmt.Errorf("bundled registry: %w", err)
	}
	return r, nil
})

// Bundled returns the registry snapshot built into the binary: the offline
// fallback when neither the network nor the cache has one. Callers must not
// modify it.
func Bundled() (*Registry, error) { return bundledOnce() }

// IconBase is where the published registry serves agent icons ({id}.svg).
const IconBase = "https://cdn.agentclientprotocol.com/registry/v1/latest"

// Build makes a registry.json from a directory laid out like the registry
// repository (<id>/agent.json), as the registry's own build does: every
// agent validated, ids matching their directory, relative icons pointing at
// IconBase. Entries keep their fields as written.
func Build(dir string) ([]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("build registry: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "_") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	agents := []map[string]any{}
	for _, name := range names {
		p := filepath.Join(dir, name, "agent.json")
		data, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("build registry: %w", err)
		}
		a, err := DecodeAgent(data)
		if err != nil {
			return nil, fmt.Errorf("build registry: %s: %w", p, err)
		}
		if a.ID != name {
			return nil, fmt.Errorf("build registry: %s: id %q does not match its directory", p, a.ID)
		}
		var raw map[string]any
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("build registry: %s: %w", p, err)
		}
		if icon, ok := raw["icon"].(string); ok && !strings.Contains(icon, "://") {
			raw["icon"] = IconBase + "/" + a.ID + ".svg"
		}
		agents = append(agents, raw)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"version": "1.0.0", "agents": agents, "extensions": []any{}}); err != nil {
		return nil, fmt.Errorf("build registry: %w", err)
	}
	return out.Bytes(), nil
}
