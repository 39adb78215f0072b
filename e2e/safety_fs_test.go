package e2e

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fs/write_text_file whose content is not valid UTF-8 (raw bytes, or a lone
// surrogate escape, which JSON decoders turn into U+FFFD) is refused with
// a clear error and writes nothing: before, the file got U+FFFD in place of
// those bytes and the agent was told it went well.
func TestSafetyWriteNotUTF8Refused(t *testing.T) {
	parallel(t)
	for _, tc := range []struct{ name, content string }{
		{"raw byte", "caf\xe9 au lait\\n"},
		{"lone surrogate escape", `caf\ud800 au lait\n`},
		{"invalid path", "ok\\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ws := fsEditor(t)
			target := filepath.Join(ws, "a.txt")
			fsPutFile(t, target, "old\n")
			path := target
			if tc.name == "invalid path" {
				path = filepath.Join(ws, "a\xff.txt")
			}
			raw := `{"jsonrpc":"2.0","id":"w1","method":"fs/write_text_file","params":{"sessionId":"$sessionId","path":"` +
				path + `","content":"` + tc.content + `"}}`
			e.SetupFake(M{"log_wire": true, "turns": []any{[]any{
				M{"raw_base64": base64.StdEncoding.EncodeToString([]byte(raw))},
				M{"sleep_ms": 50},
				text("after."),
			}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("write")
			e.WaitState("ready")
			var answer map[string]any
			e.Eventually("the answer", 10*time.Second, func() bool {
				for _, ev := range e.AgentEvents() {
					if ev["event"] == "wire" && ev["id"] == `"w1"` {
						answer = ev
					}
				}
				return answer != nil
			})
			if fmt.Sprint(answer["error_code"]) != "-32602" || !strings.Contains(fmt.Sprint(answer["error_message"]), "not valid UTF-8") {
				t.Fatalf("answer %v, want -32602 saying the text is not valid UTF-8", answer)
			}
			if got := fsGetFile(t, target); got != "old\n" {
				t.Fatalf("the file was written: %q", got)
			}
		})
	}
}

// A read reflects the buffer's options however they were set: with
// autocommands off (:noautocmd, or a plugin setting them from inside an
// autocommand) no OptionSet tells the host's copy of a buffer with unsaved
// changes (whose 'modified' does not move either), which served the old
// line endings and final newline until the buffer's next change. The
// change is noticed when Neovim next waits for input, microseconds after
// the command (a read served within them still finds the old options).
func TestSafetyReadsFollowOptionsSetWithoutAutocmds(t *testing.T) {
	parallel(t)
	for _, tc := range []struct{ set, want string }{
		{"setlocal ff=dos", "a\r\nB\r\n"},
		{"setlocal noeol nofixeol", "a\nB"},
		{"setlocal ff=mac", "a\rB\r"},
		{"setlocal binary noeol", "a\nB"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			e, ws := fsEditor(t)
			p := filepath.Join(ws, "a.txt")
			fsPutFile(t, p, "a\nb\n")
			b := e.loadBuffer(p)
			e.setLines(b, 1, 2, []string{"B"}) // unsaved
			// Both reads in one turn: nothing else happens in Neovim between
			// them (a turn's own buffers would signal a change).
			goOn := filepath.Join(ws, "go-on")
			e.SetupFake(M{"turns": []any{[]any{fsRead(p, nil), M{"wait_file": goOn}, fsRead(p, nil)}}}, nil)
			e.Chat("fake")
			e.WaitState("ready")
			e.Send("read")
			if r := e.waitFS("fs/read_text_file", 1)[0]; r.Content != "a\nB\n" {
				t.Fatalf("first read %+v", r)
			}
			// The change is noticed when Neovim next waits for input
			// (SafeState); the agent reads once that moment has passed (an
			// autocmd made after nvim-acp's runs after it).
			e.Lua(`local b, cmd = ...
				vim.api.nvim_buf_call(b, function() vim.cmd("noautocmd " .. cmd) end)
				_G.waited = false
				vim.api.nvim_create_autocmd("SafeState", { once = true, callback = function() _G.waited = true end })`, nil, b, tc.set)
			e.Eventually("Neovim waiting for input again", 10*time.Second, func() bool {
				var waited bool
				e.Lua(`return _G.waited`, &waited)
				return waited
			})
			fsPutFile(t, goOn, "1")
			if r := e.waitFS("fs/read_text_file", 2)[1]; r.Content != tc.want {
				t.Fatalf("read after :noautocmd %s = %q, want %q", tc.set, r.Content, tc.want)
			}
		})
	}
}
