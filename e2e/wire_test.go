package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/nvim-acp/nvim-acp/internal/acpschema"
	"github.com/nvim-acp/nvim-acp/internal/wirelog"
)

// The schema check: every message the client sends an agent, in every
// test, is checked against ACP's official JSON schema of its protocol
// version (internal/acpschema: the schemas @agentclientprotocol/sdk
// acpschema.SDKVersion ships). Each Editor's host records what it sends
// ($NVIM_ACP_WIRE_LOG, internal/wirelog) into a directory of its own,
// checked when the test ends: a violation fails that test. Hosts started
// otherwise record into the suite's directory; once every test has ended,
// the whole record is checked again (messages sent as a test ended
// included), and a violation not yet reported fails the suite.
//
// NVIM_ACP_SCHEMA_CHECK: "1" requires the check (make test; it fails
// without the SDK), "0" turns it off; unset, it runs when the SDK is
// installed. Benchmarks never record.
var wire struct {
	dir     string
	checker *acpschema.Checker

	mu       sync.Mutex
	reported map[string]bool // violations already reported, by text
	seq      int
}

// startWireCheck turns the schema check on (see wire); it returns what
// stops it: the final check, and whether it passed.
func startWireCheck(tmp string) (func() bool, error) {
	mode := os.Getenv("NVIM_ACP_SCHEMA_CHECK")
	if !flag.Parsed() {
		flag.Parse()
	}
	if b := flag.Lookup("test.bench"); mode == "0" || (b != nil && b.Value.String() != "") {
		return func() bool { return true }, nil
	}
	c, err := acpschema.Load(acpschema.SDKDir())
	if err != nil {
		if mode == "1" {
			return nil, fmt.Errorf("NVIM_ACP_SCHEMA_CHECK=1: %w", err)
		}
		fmt.Fprintf(os.Stderr, "e2e: messages are not checked against ACP's schema: %v\n", err)
		return func() bool { return true }, nil
	}
	wire.checker = c
	wire.dir = filepath.Join(tmp, "wire")
	wire.reported = map[string]bool{}
	if err := os.Setenv(wirelog.Env, wire.dir); err != nil {
		return nil, err
	}
	return finishWireCheck, nil
}

// finishWireCheck checks the whole record; false: a violation no test
// reported.
func finishWireCheck() bool {
	var st acpschema.Stats
	var late []string
	_ = filepath.WalkDir(wire.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		dst, vs, err := wire.checker.CheckDir(path)
		if err != nil {
			late = append(late, err.Error())
		}
		st.Messages += dst.Messages
		st.Extensions += dst.Extensions
		st.Legacy += dst.Legacy
		for m, n := range dst.Methods {
			if st.Methods == nil {
				st.Methods = map[string]int{}
			}
			st.Methods[m] += n
		}
		for _, v := range vs {
			if s := v.String(); !wire.reported[s] {
				wire.reported[s] = true
				late = append(late, s)
			}
		}
		return nil
	})
	methods := make([]string, 0, len(st.Methods))
	for m := range st.Methods {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	fmt.Printf("e2e: schema check (@agentclientprotocol/sdk %s): %d messages the client sent (%d of extension methods, %d legacy requests), %d methods (%s): %d violations\n",
		acpschema.SDKVersion, st.Messages, st.Extensions, st.Legacy, len(methods), strings.Join(methods, " "), len(wire.reported))
	for _, s := range late {
		fmt.Printf("e2e: schema violation found after its test:\n%s\n", s)
	}
	return len(late) == 0
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// wireDir is the record directory of a new Editor of t, and registers its
// check when t ends (after Neovim, registered later, has closed): "" when
// the check is off.
func wireDir(t testing.TB) string {
	if wire.checker == nil {
		return ""
	}
	wire.mu.Lock()
	wire.seq++
	dir := filepath.Join(wire.dir, fmt.Sprintf("%s-%d", unsafeName.ReplaceAllString(t.Name(), "_"), wire.seq))
	wire.mu.Unlock()
	t.Cleanup(func() {
		_, vs, err := wire.checker.CheckDir(dir)
		if err != nil {
			t.Errorf("schema check: %v", err)
		}
		wire.mu.Lock()
		defer wire.mu.Unlock()
		for _, v := range vs {
			wire.reported[v.String()] = true
			t.Errorf("the client sent a message ACP's schema refuses: %s", v)
		}
	})
	return dir
}
