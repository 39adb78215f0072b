package wirelog

import (
	"os"
	"path/filepath"
	"testing"
)

// A record holds the agent, each message sent (whole, one line each) and
// the id and method of each request received; nothing else received is
// kept. Off, nothing is written and a nil Recorder does nothing.
func TestRecorder(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, dir)
	r := Open("fake")
	if r == nil {
		t.Fatal("no recorder with the variable set")
	}
	r.Out([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n"))
	r.In([]byte(`{"jsonrpc":"2.0","id":"r1","method":"fs/read_text_file","params":{"path":"/x"}}` + "\n"))
	r.In([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n"))
	r.In([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\n"))
	r.In([]byte(`{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s","_meta":{"protocolVersion":"x"}}}` + "\n"))
	r.In([]byte("not json with \"method\" and \"id\"\n"))
	r.Out([]byte("\n"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	want := `{"agent":"fake"}
{"out":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}}
{"in":{"id":"r1","method":"fs/read_text_file"}}
{"version":1}
`
	if string(b) != want {
		t.Fatalf("record:\n%s\nwant:\n%s", b, want)
	}

	t.Setenv(Env, "")
	var off *Recorder = Open("fake")
	if off != nil {
		t.Fatal("a recorder with the variable unset")
	}
	off.Out([]byte("{}"))
	off.In([]byte(`{"id":1,"method":"x"}`))
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}
}
