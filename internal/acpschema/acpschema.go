// Package acpschema checks JSON-RPC messages a client sent against ACP's
// official JSON schemas, the ones the TypeScript SDK
// @agentclientprotocol/sdk ships (schema/v1 and schema/v2, each in its
// stable and unstable variant), at the version scripts/install-tools pins
// (SDKVersion). The e2e suite runs every test with the host recording what
// it sends (internal/wirelog) and checks each record here: a message whose
// params, result or error the schema of its protocol version refuses is a
// violation, and so is a method the schema does not have (extension
// methods, named with a leading "_", excepted: the protocol leaves their
// shape to their authors).
//
// A protocol version is checked against its unstable schema: it holds the
// stable one and the unstable methods and fields a client may use once the
// agent advertises them (session/resume, elicitation, mcp/message...).
package acpschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// SDKVersion is the @agentclientprotocol/sdk whose schemas are the
// reference: scripts/install-tools' ACP_SDK_VERSION.
const SDKVersion = "2.4.0"

// SDKDir is where scripts/install-tools puts the SDK: under
// $NVIM_ACP_TOOLS, else the user's cache directory.
func SDKDir() string {
	tools := os.Getenv("NVIM_ACP_TOOLS")
	if tools == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		tools = filepath.Join(cache, "nvim-acp", "tools")
	}
	return filepath.Join(tools, "acp-sdk", "node_modules", "@agentclientprotocol", "sdk")
}

// Legacy are the requests a client may send that the pinned schema no
// longer has, with why: each goes only to an agent that offered its
// counterpart itself (a state the schema dropped, which real agents still
// send). They are counted apart (Stats.Legacy), not checked; anything
// else the schema lacks is a violation.
var Legacy = map[string]string{
	"session/set_model": "sent only to agents that answer session/new with the `models` state and no model config option " +
		"(schema 1.21's unstable model selection, dropped since; opencode, cursor-agent and gemini-cli still offer it)",
}

// Checker checks messages against the schema of each protocol version.
type Checker struct {
	versions map[int]*schemaSet
}

// A schemaSet is one schema file, its definitions indexed by method.
type schemaSet struct {
	file     string
	defs     map[string]*jsonschema.Schema
	requests map[string]string // method -> params definition, requests a client sends
	notes    map[string]string // method -> params definition, notifications a client sends
	results  map[string]string // method -> result definition, a client's answers to an agent's requests

	once       sync.Once
	resolved   *jsonschema.Resolved
	resolveErr error
}

// Load reads the schemas of the SDK at dir (see SDKDir), which must be
// version SDKVersion.
func Load(dir string) (*Checker, error) {
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return nil, fmt.Errorf("the ACP SDK's schemas: %w (scripts/install-tools installs them)", err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "package.json"), err)
	}
	if pkg.Version != SDKVersion {
		return nil, fmt.Errorf("the ACP SDK at %s is %s, not %s: run scripts/install-tools", dir, pkg.Version, SDKVersion)
	}
	c := &Checker{versions: map[int]*schemaSet{}}
	for v, file := range map[int]string{1: "schema/v1/schema.unstable.json", 2: "schema/v2/schema.unstable.json"} {
		s, err := loadSet(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		c.versions[v] = s
	}
	return c, nil
}

func loadSet(path string) (*schemaSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &schemaSet{file: path, defs: root.Defs, requests: map[string]string{}, notes: map[string]string{},
		results: map[string]string{}}
	for name, d := range root.Defs {
		method, _ := d.Extra["x-method"].(string)
		side, _ := d.Extra["x-side"].(string)
		if method == "" {
			continue
		}
		switch {
		case (side == "agent" || side == "protocol") && strings.HasSuffix(name, "Request"):
			s.requests[method] = name
		case (side == "agent" || side == "protocol") && strings.HasSuffix(name, "Notification"):
			s.notes[method] = name
		case side == "client" && strings.HasSuffix(name, "Response"):
			s.results[method] = name
		}
	}
	for _, need := range []string{"RequestId", "Error"} {
		if root.Defs[need] == nil {
			return nil, fmt.Errorf("%s: no definition %s", path, need)
		}
	}
	if len(s.requests) == 0 || len(s.results) == 0 {
		return nil, fmt.Errorf("%s: no methods (x-method) found", path)
	}
	return s, nil
}

// validate checks v against definition def. One schema holds every
// definition as a property of its own name, resolved once: v is checked
// as the only property of an object.
func (s *schemaSet) validate(def string, v any) error {
	s.once.Do(func() {
		root := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Defs: s.defs}
		for name := range s.defs {
			root.Properties[name] = &jsonschema.Schema{Ref: "#/$defs/" + name}
		}
		s.resolved, s.resolveErr = root.Resolve(nil)
	})
	if s.resolveErr != nil {
		return fmt.Errorf("the schema %s: %w", s.file, s.resolveErr)
	}
	if s.defs[def] == nil {
		return fmt.Errorf("the schema has no definition %s", def)
	}
	return s.resolved.Validate(map[string]any{def: v})
}

// Methods lists the methods a client may send (requests and notifications)
// and answer (the agent's requests) in protocol version v.
func (c *Checker) Methods(v int) (send, answer []string) {
	s := c.versions[v]
	if s == nil {
		return nil, nil
	}
	for m := range s.requests {
		send = append(send, m)
	}
	for m := range s.notes {
		send = append(send, m)
	}
	for m := range s.results {
		answer = append(answer, m)
	}
	sort.Strings(send)
	sort.Strings(answer)
	return send, answer
}

// Violation is a message the schema refuses.
type Violation struct {
	File    string // the record it is in
	Agent   string // the agent it went to
	Kind    string // request, notification, response, or message (not JSON-RPC)
	Method  string // its method (a response: the method of the request it answers)
	Err     string // what the schema says
	Message string // the message, cut
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s to %s: %s\n\t%s\n\t(in %s)", v.Kind, v.Method, v.Agent, v.Err, v.Message, v.File)
}

// Stats counts what was checked.
type Stats struct {
	Messages   int            // messages checked
	Extensions int            // of them, extension methods ("_..."): shape not checked
	Legacy     int            // of them, Legacy requests: shape not checked
	Methods    map[string]int // per method, requests and notifications sent and requests answered
}

func (st *Stats) add(o Stats) {
	st.Messages += o.Messages
	st.Extensions += o.Extensions
	st.Legacy += o.Legacy
	for m, n := range o.Methods {
		if st.Methods == nil {
			st.Methods = map[string]int{}
		}
		st.Methods[m] += n
	}
}

// CheckDir checks every record (*.jsonl) in dir.
func (c *Checker) CheckDir(dir string) (Stats, []Violation, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return Stats{}, nil, err
	}
	sort.Strings(files)
	var st Stats
	var vs []Violation
	for _, f := range files {
		fst, fvs, err := c.CheckFile(f)
		if err != nil {
			return st, vs, err
		}
		st.add(fst)
		vs = append(vs, fvs...)
	}
	return st, vs, nil
}

// CheckFile checks the record at path.
func (c *Checker) CheckFile(path string) (Stats, []Violation, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, nil, err
	}
	defer f.Close()
	return c.Check(path, f)
}

// record is one line of a wirelog record.
type record struct {
	Agent   string          `json:"agent"`
	Version int             `json:"version"`
	Out     json.RawMessage `json:"out"`
	In      *struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	} `json:"in"`
}

// Check checks the record r (named name in violations): see
// internal/wirelog for its lines. An unfinished last line (the host ended
// while writing it) is not checked.
func (c *Checker) Check(name string, r io.Reader) (Stats, []Violation, error) {
	st := Stats{Methods: map[string]int{}}
	var vs []Violation
	agent := "?"
	version := 1
	asked := map[string]string{} // the agent's request ids -> their methods
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return st, vs, nil // an unfinished line is dropped
		}
		if err != nil {
			return st, vs, fmt.Errorf("%s: %w", name, err)
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			vs = append(vs, Violation{File: name, Agent: agent, Kind: "message", Err: "not JSON: " + err.Error(), Message: cut(line)})
			continue
		}
		switch {
		case rec.Agent != "":
			agent = rec.Agent
		case rec.Version > 0:
			// The agent's answer to initialize: the version negotiated
			// (an offer of 2 answered with 1 is spoken in v1 from here).
			version = rec.Version
		case rec.In != nil:
			asked[string(bytes.TrimSpace(rec.In.ID))] = rec.In.Method
		case rec.Out != nil:
			if v, ok := initVersion(rec.Out); ok {
				version = v
			}
			s := c.versions[version]
			st.Messages++
			vio := Violation{File: name, Agent: agent, Message: cut(rec.Out)}
			if s == nil {
				vio.Kind, vio.Err = "message", fmt.Sprintf("no schema of protocol version %d", version)
				vs = append(vs, vio)
				continue
			}
			kind, method, ext, err := s.check(rec.Out, asked)
			vio.Kind, vio.Method = kind, method
			if ext {
				st.Extensions++
			}
			if kind == "request" && Legacy[method] != "" && errors.Is(err, errNotInSchema) {
				st.Legacy++
				err = nil
			}
			if method != "" {
				st.Methods[method]++
			}
			if err != nil {
				vio.Err = err.Error()
				vs = append(vs, vio)
			}
		}
	}
}

var errNotInSchema = errors.New("not in the schema")

// initVersion is the protocolVersion of msg when it is initialize.
func initVersion(msg json.RawMessage) (int, bool) {
	if !bytes.Contains(msg, []byte(`"initialize"`)) {
		return 0, false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			ProtocolVersion int `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "initialize" {
		return 0, false
	}
	return m.Params.ProtocolVersion, true
}

// check checks one message the client sent: its kind, its method, whether
// that is an extension, and what the schema refuses.
func (s *schemaSet) check(raw json.RawMessage, asked map[string]string) (kind, method string, ext bool, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return "message", "", false, fmt.Errorf("not a JSON object: %w", err)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return "message", "", false, fmt.Errorf(`jsonrpc is %s, not "2.0"`, orAbsent(m["jsonrpc"]))
	}
	value := func(r json.RawMessage) any {
		var v any
		if r != nil {
			_ = json.Unmarshal(r, &v)
		}
		return v
	}
	if mraw, ok := m["method"]; ok {
		if err := json.Unmarshal(mraw, &method); err != nil {
			return "message", "", false, fmt.Errorf("method is %s, not a string", mraw)
		}
		kind = "notification"
		defs := s.notes
		if id, ok := m["id"]; ok {
			kind, defs = "request", s.requests
			if err := s.validate("RequestId", value(id)); err != nil {
				return kind, method, false, fmt.Errorf("id: %w", err)
			}
		}
		if strings.HasPrefix(method, "_") {
			return kind, method, true, nil
		}
		def := defs[method]
		if def == "" {
			return kind, method, false, fmt.Errorf("%w: the schema has no %s %q a client sends", errNotInSchema, kind, method)
		}
		if err := s.validate(def, value(m["params"])); err != nil {
			return kind, method, false, fmt.Errorf("params (%s): %w", def, err)
		}
		return kind, method, false, nil
	}
	kind = "response"
	id, ok := m["id"]
	if !ok {
		return kind, "", false, errors.New("neither a method nor an id")
	}
	if err := s.validate("RequestId", value(id)); err != nil {
		return kind, "", false, fmt.Errorf("id: %w", err)
	}
	method, ok = asked[string(bytes.TrimSpace(id))]
	if !ok {
		return kind, "", false, fmt.Errorf("answers id %s, which the agent never asked", id)
	}
	ext = strings.HasPrefix(method, "_")
	res, hasRes := m["result"]
	e, hasErr := m["error"]
	switch {
	case hasRes == hasErr:
		return kind, method, ext, errors.New("needs exactly one of result and error")
	case hasErr:
		if err := s.validate("Error", value(e)); err != nil {
			return kind, method, ext, fmt.Errorf("error: %w", err)
		}
		return kind, method, ext, nil
	case ext:
		return kind, method, ext, nil
	}
	def := s.results[method]
	if def == "" {
		return kind, method, false, fmt.Errorf("a result to %q, which the schema has no response of", method)
	}
	if err := s.validate(def, value(res)); err != nil {
		return kind, method, false, fmt.Errorf("result (%s): %w", def, err)
	}
	return kind, method, false, nil
}

func orAbsent(r json.RawMessage) string {
	if r == nil {
		return "absent"
	}
	return string(r)
}

func cut(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

// Defines reports whether the schema of protocol version v has a property
// at path (object keys, from the top) in definition def, through its
// references and alternatives: e.g. ("ClientCapabilities", "session",
// "notices").
func (c *Checker) Defines(v int, def string, path ...string) bool {
	s := c.versions[v]
	if s == nil || s.defs[def] == nil {
		return false
	}
	return s.defines(s.defs[def], path, 0)
}

func (s *schemaSet) defines(sc *jsonschema.Schema, path []string, depth int) bool {
	if sc == nil || depth > 32 {
		return false
	}
	if len(path) == 0 {
		return true
	}
	if strings.HasPrefix(sc.Ref, "#/$defs/") && s.defines(s.defs[strings.TrimPrefix(sc.Ref, "#/$defs/")], path, depth+1) {
		return true
	}
	if p := sc.Properties[path[0]]; p != nil && s.defines(p, path[1:], depth+1) {
		return true
	}
	for _, alts := range [][]*jsonschema.Schema{sc.AllOf, sc.AnyOf, sc.OneOf} {
		for _, a := range alts {
			if s.defines(a, path, depth+1) {
				return true
			}
		}
	}
	return false
}
