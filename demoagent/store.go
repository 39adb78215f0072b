package demoagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"
)

// maxStored bounds how many past sessions the demo keeps on disk.
const maxStored = 20

// entry is one message of a stored conversation.
type entry struct {
	Role string `json:"role"` // "user" or "agent"
	Text string `json:"text"`
}

// record is a session as the demo stores it, so session/list and
// session/load work across restarts like a real agent's.
type record struct {
	ID      string  `json:"id"`
	Cwd     string  `json:"cwd"`
	Title   string  `json:"title"`
	Updated string  `json:"updatedAt"` // RFC 3339
	Mode    string  `json:"mode"`
	Model   string  `json:"model"`
	History []entry `json:"history"`
}

// store keeps records as one JSON file each in dir.
type store struct {
	dir string
}

// defaultStore is $XDG_STATE_HOME/nvim-acp/demo-sessions (~/.local/state/...).
func defaultStore() *store {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return &store{}
		}
		base = filepath.Join(home, ".local", "state")
	}
	return &store{dir: filepath.Join(base, "nvim-acp", "demo-sessions")}
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func (s *store) path(id string) (string, error) {
	if s.dir == "" {
		return "", errors.New("no directory for the demo's sessions")
	}
	if !safeID.MatchString(id) {
		return "", fmt.Errorf("bad session id %q", id)
	}
	return filepath.Join(s.dir, id+".json"), nil
}

// save writes r and drops the oldest records past maxStored.
func (s *store) save(r *record) error {
	p, err := s.path(r.ID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		return err
	}
	all, err := s.list("")
	if err != nil {
		return nil
	}
	for _, old := range all[min(len(all), maxStored):] {
		if q, err := s.path(old.ID); err == nil {
			_ = os.Remove(q)
		}
	}
	return nil
}

// load reads the record of id.
func (s *store) load(id string) (*record, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("no demo session %s", id)
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("demo session %s: %w", id, err)
	}
	return &r, nil
}

// list returns the records of cwd (all when cwd is ""), newest first.
func (s *store) list(cwd string) ([]*record, error) {
	if s.dir == "" {
		return nil, nil
	}
	names, err := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*record
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			continue
		}
		var r record
		if json.Unmarshal(b, &r) != nil || r.ID == "" {
			continue
		}
		if cwd == "" || r.Cwd == cwd {
			out = append(out, &r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated > out[j].Updated })
	return out, nil
}

// now is the time stamp of an update.
func now() string { return time.Now().UTC().Format(time.RFC3339) }
