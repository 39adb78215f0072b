// Command snapshotgen writes the registry snapshot bundled in nvim-acp,
// registry/snapshot/registry.json, from a directory of <id>/agent.json files.
// With -url it first replaces that directory's agents with the published
// registry's, so the directory and the snapshot stay one source.
//
//	go run ./registry/internal/snapshotgen -dir registry/testdata/acp-registry -out registry/snapshot/registry.json
//	go run ./registry/internal/snapshotgen -url https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json \
//	    -dir registry/testdata/acp-registry -out registry/snapshot/registry.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/nvim-acp/nvim-acp/registry"
)

func main() {
	dir := flag.String("dir", "", "directory of <id>/agent.json files")
	url := flag.String("url", "", "published registry.json to copy into -dir first")
	out := flag.String("out", "", "file to write")
	flag.Parse()
	if err := run(*dir, *url, *out); err != nil {
		fmt.Fprintln(os.Stderr, "snapshotgen:", err)
		os.Exit(1)
	}
}

func run(dir, url, out string) error {
	if out == "" || dir == "" {
		return fmt.Errorf("usage: snapshotgen [-url URL] -dir DIR -out FILE")
	}
	if url != "" {
		data, err := download(url)
		if err != nil {
			return err
		}
		if err := split(data, dir); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "snapshotgen: %s now holds the agents of %s; update its README's provenance line\n", dir, url)
	}
	data, err := registry.Build(dir)
	if err != nil {
		return err
	}
	reg, err := registry.Decode(data)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	fmt.Printf("snapshotgen: %d agents -> %s\n", len(reg.Agents), out)
	return nil
}

// split replaces the <id>/agent.json files of dir with the agents of a
// registry.json; entries the decoder rejects are left out (and said).
func split(data []byte, dir string) error {
	reg, err := registry.Decode(data)
	if err != nil {
		return err
	}
	for _, s := range reg.Skipped {
		fmt.Fprintln(os.Stderr, "snapshotgen: left out:", s)
	}
	valid := map[string]bool{}
	for _, a := range reg.Agents {
		valid[a.ID] = true
	}
	var raw struct {
		Agents []json.RawMessage `json:"agents"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*", "agent.json"))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.RemoveAll(filepath.Dir(p)); err != nil {
			return err
		}
	}
	for _, m := range raw.Agents {
		var id struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(m, &id) != nil || !valid[id.ID] {
			continue
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, m, "", "  "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		if err := os.MkdirAll(filepath.Join(dir, id.ID), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, id.ID, "agent.json"), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func download(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", registry.UserAgent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, registry.DefaultMaxSize))
}
