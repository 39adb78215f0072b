package host

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// TestFastFSCancel: a fast-path request waiting on the user (a read outside
// the workspace) ends with a cancelled error when the agent sends
// $/cancel_request for it, as requests through acp-go-sdk do.
func TestFastFSCancel(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": acp.ClientMethodFsReadTextFile,
		"params": acp.ReadTextFileRequest{SessionId: "bench", Path: outside}})
	if _, err := f.toHost.Write(append(req, '\n')); err != nil {
		t.Fatal(err)
	}
	// Wait until the question is asked, so the request is really waiting.
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.s.mu.Lock()
		asked := len(f.s.perms) > 0
		f.s.mu.Unlock()
		if asked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the read never asked about the outside path")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	cancel := `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}` + "\n"
	if _, err := f.toHost.Write([]byte(cancel)); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		resp, _ := f.fromHost.ReadSlice('\n')
		got <- resp
	}()
	var resp []byte
	select {
	case resp = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer 10 s after $/cancel_request")
	}
	var m struct {
		ID    json.RawMessage   `json:"id"`
		Error *acp.RequestError `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Fatalf("response %q: %v", resp, err)
	}
	if string(m.ID) != "7" || m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("response %s: want id 7 and a cancelled (-32800) error", bytes.TrimSpace(resp))
	}
}

// TestFastFSDeclinedGoesThroughSDK: a request the fast path does not take
// (a key spelled in another case, which encoding/json still matches) is
// served the ordinary way, with the same answer.
func TestFastFSDeclinedGoesThroughSDK(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	p := filepath.Join(f.ws, "plain.txt")
	if err := os.WriteFile(p, []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file","params":{"sessionId":"bench","path":` + quote(p) + `,"line":2}}`,
		`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"bench","Path":` + quote(p) + `,"Line":2}}`,
	} {
		resp := f.roundTrip(t, []byte(line+"\n"))
		if !strings.Contains(string(resp), `"result":{"content":"two\nthree\n"}`) {
			t.Fatalf("%s\nanswered %s", line, resp)
		}
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFastFSErrorsAsSDK: the fast path and the SDK's path answer a failing
// fs/* request with the same error (one route serves both).
func TestFastFSErrorsAsSDK(t *testing.T) {
	f := newFastBench(t)
	defer f.closer()
	for _, c := range []struct{ name, params, declined string }{
		{"unknown session", `{"sessionId":"nope","path":"/x"}`, `{"sessionId":"nope","Path":"/x"}`},
		{"relative path", `{"sessionId":"bench","path":"rel.txt"}`, `{"sessionId":"bench","Path":"rel.txt"}`},
		{"write unknown session", `{"sessionId":"nope","path":"/x","content":"y"}`, `{"sessionId":"nope","Path":"/x","content":"y"}`},
	} {
		method := acp.ClientMethodFsReadTextFile
		if strings.Contains(c.params, "content") {
			method = acp.ClientMethodFsWriteTextFile
		}
		var errs [2]string
		for i, params := range []string{c.params, c.declined} {
			resp := f.roundTrip(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+"}\n"))
			var m struct {
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(resp, &m); err != nil || m.Error == nil {
				t.Fatalf("%s: response %s: want an error", c.name, resp)
			}
			errs[i] = string(m.Error)
		}
		if errs[0] != errs[1] {
			t.Errorf("%s: fast path answered %s, the SDK's path %s", c.name, errs[0], errs[1])
		}
	}
}

func TestPartsFrom(t *testing.T) {
	parts := [][]byte{[]byte("ab"), nil, []byte("cde"), []byte("f")}
	for _, c := range []struct {
		k    int
		want []string
	}{
		{0, []string{"ab", "", "cde", "f"}},
		{1, []string{"b", "", "cde", "f"}},
		{2, []string{"cde", "f"}},
		{4, []string{"e", "f"}},
		{5, []string{"f"}},
		{6, nil},
	} {
		var got []string
		for _, p := range partsFrom(parts, c.k) {
			got = append(got, string(p))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("partsFrom(%d) = %q, want %q", c.k, got, c.want)
		}
		if s := string(concatFrom(parts, c.k)); s != strings.Join(c.want, "") {
			t.Errorf("concatFrom(%d) = %q", c.k, s)
		}
	}
}

// readResponse writes what response does for a read's result, for ids of
// every size around its inline head.
func TestReadResponseLikeResponse(t *testing.T) {
	enc := []byte(`line 1\nline \"2\"\n`)
	for _, id := range []string{`0`, `7`, `-12`, `"a"`, `"esc \" \\ id"`, `"` + strings.Repeat("x", 50) + `"`, `"` + strings.Repeat("y", 51) + `"`, `"` + strings.Repeat("z", 200) + `"`} {
		want := bytes.Join(response([]byte(id), [][]byte{[]byte(`{"content":"`), enc, []byte(`"}`)}, nil), nil)
		got := bytes.Join(readResponse([]byte(id), enc), nil)
		if !bytes.Equal(got, want) {
			t.Errorf("id %s: %s, want %s", id, got, want)
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result struct {
				Content string `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(got, &m); err != nil || string(m.ID) != id || m.Result.Content != "line 1\nline \"2\"\n" {
			t.Errorf("id %s: %s decodes to %+v (%v)", id, got, m, err)
		}
	}
}
