// Package registry reads the ACP agent registry
// (github.com/agentclientprotocol/registry) and installs the agents it lists.
//
// The registry is one JSON document, registry.json, published at DefaultURL:
// {"version", "agents": [agent...], "extensions": [...]}, where each agent is
// an agent.json entry (agent.schema.json): id, name, version, description and
// a distribution of one or more kinds:
//
//   - npx: an npm package run with `npx -y <package>@<version> [args]`;
//   - uvx: a PyPI package run with `uvx <package>==<version> [args]`;
//   - binary: per-platform archives (.zip, .tar.gz, .tgz, .tar.bz2, .tbz2 or
//     a raw executable) with the command to run once unpacked, and an
//     optional sha256 of the archive.
//
// Source fetches the published registry with a timeout, caches it and falls
// back to the cache, then to a snapshot bundled in the binary (Bundled), when
// the network fails. Installer resolves an agent to the command that starts
// it, and installs binary agents under <data>/agents/<id>/<version>/.
//
// What a binary install verifies: the registry entry against the schema
// (id and version usable as directory names; an npx/uvx cmd that names a
// program, never an option); the archive's sha256 when the registry gives
// one (the schema makes it optional; few entries have it, so most
// downloads are trusted to their https URL: an archive that is not https,
// or is redirected off it, needs the sha256); always the length the
// server announced, a size limit, and that the bytes are the format the URL
// names (.zip, .tar.gz/.tgz, .tar.bz2/.tbz2; anything else is sniffed, and a
// file that is no archive is a raw executable). Unpacking refuses absolute
// names, ".." components, writes through symlinks, symlinks and hard links
// leading out of the install directory (also through chains of links), and
// archives over the size or entry limits; it skips device files; it keeps
// permission bits (never setuid or group/other write) and makes the command
// executable. The install becomes visible by one rename, so a failed or
// cancelled install leaves nothing.
//
// An entry's env may set variables that change what runs (RiskyEnv): the
// user sees them before the agent first starts with them.
//
// The package knows nothing of Neovim.
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Distribution kinds, as named in agent.json.
const (
	KindBinary = "binary"
	KindNpx    = "npx"
	KindUvx    = "uvx"
)

// Platforms are the binary distribution keys the schema allows.
var Platforms = []string{
	"darwin-aarch64", "darwin-x86_64",
	"linux-aarch64", "linux-x86_64",
	"windows-aarch64", "windows-x86_64",
}

// Registry is a decoded registry.json.
type Registry struct {
	Version    string  `json:"version"`
	Agents     []Agent `json:"agents"`
	Extensions []Agent `json:"extensions"`

	// Skipped names the entries left out because they break the schema
	// (one line each); the rest of the registry stays usable.
	Skipped []string `json:"-"`
}

// Agent is one agent.json entry.
type Agent struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Website      string       `json:"website,omitempty"`
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	LicenseURL   string       `json:"license_url,omitempty"`
	Icon         string       `json:"icon,omitempty"`
	Distribution Distribution `json:"distribution"`
}

// Distribution says how an agent can be obtained; at least one kind is set.
type Distribution struct {
	Binary map[string]BinaryTarget `json:"binary,omitempty"`
	Npx    *Package                `json:"npx,omitempty"`
	Uvx    *Package                `json:"uvx,omitempty"`
}

// Package is an npx or uvx distribution.
type Package struct {
	// Package is the package name, usually with its version
	// ("@google/gemini-cli@0.27.3", "fast-agent-acp==0.10.1").
	Package string `json:"package"`
	// Cmd, when set, is the executable of the package to run (FORMAT.md:
	// `npx --package <package> <cmd>`, `uvx --from <package> <cmd>`).
	Cmd  string            `json:"cmd,omitempty"`
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// BinaryTarget is the archive of one platform and how to run what it holds.
type BinaryTarget struct {
	Archive string            `json:"archive"`
	SHA256  string            `json:"sha256,omitempty"`
	Cmd     string            `json:"cmd"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Kinds lists the distribution kinds an agent offers, in the order an
// install prefers them: binary, npx, uvx.
func (a Agent) Kinds() []string {
	var kinds []string
	if len(a.Distribution.Binary) > 0 {
		kinds = append(kinds, KindBinary)
	}
	if a.Distribution.Npx != nil {
		kinds = append(kinds, KindNpx)
	}
	if a.Distribution.Uvx != nil {
		kinds = append(kinds, KindUvx)
	}
	return kinds
}

// Agent returns the agent with the given id.
func (r *Registry) Agent(id string) (Agent, bool) {
	for _, a := range r.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return Agent{}, false
}

var (
	idPattern     = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	versionPrefix = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)
	// versionPath is what a version must look like to name a directory: the
	// schema only constrains its start, so "1.0.0/../../x" would pass it.
	versionPath = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+_-]*$`)
	sha256Hex   = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)
)

// maxIDLen bounds ids and versions, which name directories.
const maxIDLen = 128

// Validate checks a against agent.schema.json, plus what makes it safe to
// install: an id and version usable as directory names.
func (a Agent) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !idPattern.MatchString(a.ID) || len(a.ID) > maxIDLen {
		bad("id %q: want lowercase letters, digits and hyphens, starting with a letter", a.ID)
	}
	if a.Name == "" {
		bad("name is empty")
	}
	if !versionPrefix.MatchString(a.Version) {
		bad("version %q is not a semantic version", a.Version)
	} else if !versionPath.MatchString(a.Version) || len(a.Version) > maxIDLen {
		bad("version %q has characters that cannot name a directory", a.Version)
	}
	if a.Description == "" {
		bad("description is empty")
	}
	d := a.Distribution
	if len(d.Binary) == 0 && d.Npx == nil && d.Uvx == nil {
		bad("distribution has no binary, npx or uvx entry")
	}
	for _, kp := range []struct {
		kind string
		p    *Package
	}{{KindNpx, d.Npx}, {KindUvx, d.Uvx}} {
		if kp.p != nil && strings.TrimSpace(kp.p.Package) == "" {
			bad("%s: package is empty", kp.kind)
		}
		if kp.p != nil && strings.HasPrefix(kp.p.Package, "-") {
			bad("%s: package %q looks like an option", kp.kind, kp.p.Package)
		}
		if kp.p != nil && kp.p.Cmd != "" {
			if err := programName(kp.p.Cmd); err != nil {
				bad("%s: cmd %w", kp.kind, err)
			}
		}
	}
	for _, plat := range sortedKeys(d.Binary) {
		t := d.Binary[plat]
		if !knownPlatform(plat) {
			bad("binary: unknown platform %q", plat)
		}
		if t.Archive == "" {
			bad("binary %s: archive is empty", plat)
		}
		if t.Cmd == "" {
			bad("binary %s: cmd is empty", plat)
		}
		if t.SHA256 != "" && !sha256Hex.MatchString(t.SHA256) {
			bad("binary %s: sha256 %q is not 64 hex digits", plat, t.SHA256)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("agent %q: %w", a.ID, errors.Join(errs...))
}

// programName checks that cmd, a package's command, names a program: not
// an option the launcher would take as its own (uvx `--index-url=...`),
// and no spaces or control characters.
func programName(cmd string) error {
	if strings.HasPrefix(cmd, "-") {
		return fmt.Errorf("%q looks like an option, not a program", cmd)
	}
	for _, r := range cmd {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("%q is not a program name (spaces or control characters)", cmd)
		}
	}
	return nil
}

func knownPlatform(p string) bool {
	for _, q := range Platforms {
		if p == q {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// DecodeAgent decodes and validates one agent.json.
func DecodeAgent(data []byte) (Agent, error) {
	var a Agent
	if err := json.Unmarshal(data, &a); err != nil {
		return Agent{}, fmt.Errorf("decode agent.json: %w", err)
	}
	if err := a.Validate(); err != nil {
		return Agent{}, err
	}
	return a, nil
}

// Decode decodes a registry.json. An agent that breaks the schema is left
// out and named in Skipped; a document that is not a registry is an error.
func Decode(data []byte) (*Registry, error) {
	var raw struct {
		Version    string            `json:"version"`
		Agents     []json.RawMessage `json:"agents"`
		Extensions []json.RawMessage `json:"extensions"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("decode registry: %w", err)
	}
	if raw.Agents == nil {
		return nil, fmt.Errorf("decode registry: no \"agents\" list")
	}
	r := &Registry{Version: raw.Version}
	seen := map[string]bool{}
	decode := func(list []json.RawMessage, into *[]Agent) {
		for i, m := range list {
			a, err := DecodeAgent(m)
			if err != nil {
				r.Skipped = append(r.Skipped, fmt.Sprintf("entry %d: %v", i, err))
				continue
			}
			if seen[a.ID] {
				r.Skipped = append(r.Skipped, fmt.Sprintf("entry %d: duplicate id %q", i, a.ID))
				continue
			}
			seen[a.ID] = true
			*into = append(*into, a)
		}
	}
	decode(raw.Agents, &r.Agents)
	decode(raw.Extensions, &r.Extensions)
	if r.Agents == nil {
		r.Agents = []Agent{}
	}
	return r, nil
}

// Platform returns the registry's platform key for a GOOS/GOARCH pair, or
// "" when the registry has no key for it.
func Platform(goos, goarch string) string {
	var arch string
	switch goarch {
	case "amd64":
		arch = "x86_64"
	case "arm64":
		arch = "aarch64"
	default:
		return ""
	}
	switch goos {
	case "darwin", "linux", "windows":
		return goos + "-" + arch
	}
	return ""
}
