// Command refclient is the reference ACP client of nvim-acp's benchmarks: the
// floor an editor's client cannot go below. It starts an agent, opens one
// session, sends one prompt and answers the agent's requests with the least
// work a client can do: fs/read_text_file from bytes encoded once per
// (path, line, limit) and kept, found again by the request's params bytes
// without decoding them, fs/write_text_file with an empty result (nothing
// written, the request not decoded), nothing else. No SDK connection: it
// reads and writes the pipe itself. It exits when the prompt is answered
// (with -serve, at its stdin's end).
//
//	refclient -cwd DIR -prompt TEXT [-cpu FILE] -- AGENT [ARGS...]
//	refclient -cwd DIR -serve [-cpu FILE] -- AGENT [ARGS...]
//
// With -serve one agent and one session serve every prompt, as nvim-acp
// keeps its agent between prompts: the floor in the same steady state,
// not a process started cold for each prompt.
//
// Its pipes to the agent are as large as nvim-acp's (1 MiB, where the
// kernel allows it), so a large message costs both the same crossings.
//
// With -cpu it writes its own CPU time over the prompt, in nanoseconds, to
// FILE (benchmarks compare it with nvim-acp's); with -serve, over the last
// prompt, before it prints "done".
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"golang.org/x/sys/unix"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
	"github.com/nvim-acp/nvim-acp/internal/pollfile"
)

func main() {
	cwd := flag.String("cwd", ".", "session cwd")
	prompt := flag.String("prompt", "", "prompt text")
	cpuFile := flag.String("cpu", "", "write the CPU time used over the prompt (ns) to this file")
	serve := flag.Bool("serve", false, "send each line of stdin as a prompt, printing done after each")
	flag.Parse()
	if flag.NArg() == 0 || (*prompt == "") == !*serve {
		fmt.Fprintln(os.Stderr, "usage: refclient -cwd DIR (-prompt TEXT | -serve) -- AGENT [ARGS...]")
		os.Exit(2)
	}
	prompts := func(yield func(string) bool) { yield(*prompt) }
	if *serve {
		prompts = func(yield func(string) bool) {
			// Through the poller: a blocking read here would keep this
			// runtime's monitor waking beside nvim-acp's prompts.
			in := bufio.NewScanner(pollfile.Of(os.Stdin))
			for in.Scan() {
				if !yield(in.Text()) {
					return
				}
				fmt.Println("done")
			}
		}
	}
	if err := run(*cwd, prompts, *cpuFile, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "refclient:", err)
		os.Exit(1)
	}
}

// growPipe asks for a 1 MiB pipe, as nvim-acp's transport does once a
// large message crosses one (here at once: the floor is one process).
func growPipe(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 1<<20) })
	}
}

type client struct {
	w     *os.File
	cache map[readKey][]byte // encoded ReadTextFileResponse
	raw   map[string][]byte  // the same by the request's params, undecoded
	buf   []byte
}

type readKey struct {
	path        string
	line, limit int
}

func run(cwd string, prompts iter.Seq[string], cpuFile string, argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = cwd
	cmd.Stderr = os.Stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	growPipe(inW)
	growPipe(outR)
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		return err
	}
	inR.Close()
	outW.Close()
	defer func() {
		inW.Close()
		_ = cmd.Wait()
	}()
	c := &client{w: inW, cache: map[readKey][]byte{}, raw: map[string][]byte{}}
	r := bufio.NewReaderSize(outR, 16<<20)
	for i, step := range []struct {
		method string
		params any
	}{
		{acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
			ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}}},
		{acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}}},
	} {
		if err := c.call(r, i+1, step.method, step.params); err != nil {
			return err
		}
	}
	id := 2
	prompts(func(prompt string) bool {
		id++
		cpu0, _ := cputime.Process(0)
		if err = c.call(r, id, acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionId: "bench", Prompt: []acp.ContentBlock{acp.TextBlock(prompt)}}); err != nil {
			return false
		}
		if cpuFile != "" {
			var cpu1 time.Duration
			if cpu1, err = cputime.Process(0); err != nil {
				return false
			}
			err = os.WriteFile(cpuFile, []byte(fmt.Sprint(int64(cpu1-cpu0))), 0o644)
		}
		return err == nil
	})
	return err
}

// call sends request id and serves the agent until it is answered.
func (c *client) call(r *bufio.Reader, id int, method string, params any) error {
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return err
	}
	if _, err := c.w.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := c.serveUntil(r, id); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// message is the part of a JSON-RPC message the client looks at.
type message struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params json.RawMessage   `json:"params"`
	Error  *acp.RequestError `json:"error"`
}

// serveUntil answers requests until the response to id arrives.
func (c *client) serveUntil(r *bufio.Reader, id int) error {
	want := []byte(fmt.Sprint(id))
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if id, res, ok := c.cachedRead(line); ok {
			if err := c.reply(id, res); err != nil {
				return err
			}
			continue
		}
		if m, ok := bigRequest(line); ok {
			if err := c.reply(m.ID, []byte("null")); err != nil {
				return err
			}
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("bad line from agent: %v", err)
		}
		switch {
		case m.Method == "" && bytes.Equal(m.ID, want):
			if m.Error != nil {
				return m.Error
			}
			return nil
		case m.Method == acp.ClientMethodFsReadTextFile:
			var p acp.ReadTextFileRequest
			if err := json.Unmarshal(m.Params, &p); err != nil {
				return err
			}
			res := c.read(p)
			if params, ok := readParams(line); ok {
				c.raw[string(params)] = res
			}
			if err := c.reply(m.ID, res); err != nil {
				return err
			}
		case m.Method != "" && m.ID != nil:
			if err := c.reply(m.ID, []byte("null")); err != nil {
				return err
			}
		}
	}
}

// bigRequest recognizes the agent's large requests without decoding them:
// acp-go-sdk writes {"jsonrpc":"2.0","id":N,"method":"..." in this order.
func bigRequest(line []byte) (message, bool) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if len(line) < 64<<10 || !bytes.HasPrefix(line, []byte(prefix)) {
		return message{}, false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 || !bytes.HasPrefix(rest[end:], []byte(`,"method":"fs/write_text_file"`)) {
		return message{}, false
	}
	return message{ID: rest[:end], Method: acp.ClientMethodFsWriteTextFile}, true
}

const (
	requestHead = `{"jsonrpc":"2.0","id":`
	readMethod  = `,"method":"fs/read_text_file","params":`
)

// readParams returns the params of an fs/read_text_file request line as
// agents write it (acp-go-sdk's member order), undecoded.
func readParams(line []byte) ([]byte, bool) {
	if !bytes.HasPrefix(line, []byte(requestHead)) {
		return nil, false
	}
	rest := line[len(requestHead):]
	comma := bytes.IndexByte(rest, ',')
	if comma < 0 || !bytes.HasPrefix(rest[comma:], []byte(readMethod)) {
		return nil, false
	}
	params := bytes.TrimSuffix(bytes.TrimRight(rest[comma+len(readMethod):], "\r\n"), []byte("}"))
	return params, true
}

// cachedRead answers a read whose params were seen before from the bytes
// kept for them: no decoding at all, the floor of a client.
func (c *client) cachedRead(line []byte) (id, res []byte, ok bool) {
	params, ok := readParams(line)
	if !ok {
		return nil, nil, false
	}
	res, ok = c.raw[string(params)]
	if !ok {
		return nil, nil, false
	}
	rest := line[len(requestHead):]
	return rest[:bytes.IndexByte(rest, ',')], res, true
}

func (c *client) read(p acp.ReadTextFileRequest) []byte {
	k := readKey{path: p.Path}
	if p.Line != nil {
		k.line = *p.Line
	}
	if p.Limit != nil {
		k.limit = *p.Limit
	}
	if b, ok := c.cache[k]; ok {
		return b
	}
	data, err := os.ReadFile(p.Path)
	if err != nil {
		b, _ := json.Marshal(map[string]any{"error": err.Error()})
		return b
	}
	text := string(data)
	if k.line > 1 || k.limit > 0 {
		lines := strings.SplitAfter(text, "\n")
		from := max(k.line, 1) - 1
		to := len(lines)
		if k.limit > 0 {
			to = min(from+k.limit, to)
		}
		text = strings.Join(lines[min(from, to):to], "")
	}
	b, _ := json.Marshal(acp.ReadTextFileResponse{Content: text})
	c.cache[k] = b
	return b
}

func (c *client) reply(id json.RawMessage, result []byte) error {
	c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","id":`...)
	c.buf = append(c.buf, id...)
	c.buf = append(c.buf, `,"result":`...)
	c.buf = append(c.buf, result...)
	c.buf = append(c.buf, "}\n"...)
	_, err := c.w.Write(c.buf)
	return err
}
