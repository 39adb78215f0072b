package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/neovim/go-client/nvim"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
	"github.com/nvim-acp/nvim-acp/internal/gate"
	"github.com/nvim-acp/nvim-acp/transport"
)

// fsBench is a real headless Neovim with the plugin loaded, a host session
// on a workspace, and an ACP connection pair over in-process pipes: the
// "agent" end sends fs/read_text_file as a real agent would (JSON-RPC,
// framing, the SDK's dispatch), the client end is the session's agent
// connection as the host makes it (gate, fs fast path, SDK), and the bridge
// reaches Neovim through the real nvimEditor (the buffer cache and
// lua/acp/buffers.lua).
type fsBench struct {
	nv     *nvim.Nvim
	ws     string
	s      *Session
	agent  *acp.Connection
	closer func()
}

func newFSBench(b testing.TB) *fsBench {
	b.Helper()
	bin := os.Getenv("NVIM_BIN")
	if bin == "" {
		b.Skip("set NVIM_BIN to a Neovim >= 0.10 (scripts/install-nvim provides one)")
	}
	wd, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Dir(wd)
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	nv, err := nvim.NewChildProcess(
		nvim.ChildProcessCommand(bin),
		nvim.ChildProcessArgs("--embed", "--headless", "--clean", "-n", "-i", "NONE"),
		nvim.ChildProcessDir(ws),
		nvim.ChildProcessServe(true),
	)
	if err != nil {
		b.Fatalf("start nvim: %v", err)
	}
	if err := nv.ExecLua(`vim.opt.rtp:prepend(...)`, nil, root); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := New(nv, log, nil)
	s := newSession(h, 1, SessionOptions{Agent: AgentSpec{Name: "bench", Cwd: ws}})
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	a := benchAgent(s, a2cR, c2aW)
	agent := acp.NewConnection(func(context.Context, string, json.RawMessage) (any, *acp.RequestError) {
		return nil, nil
	}, a2cW, c2aR)
	return &fsBench{nv: nv, ws: ws, s: s, agent: agent, closer: func() {
		s.end()
		c2aW.Close()
		a2cW.Close()
		close(a.exited)
		nv.Close()
	}}
}

// benchAgent is the client side of session s's agent connection as
// startAgent makes it (gate, fs fast path, SDK connection), reading the
// agent's output from r and writing to w.
func benchAgent(s *Session, r io.Reader, w io.Writer) *Agent {
	s.id = "bench"
	a := &Agent{
		h:        s.h,
		log:      s.log,
		exited:   make(chan struct{}),
		sessions: map[acp.SessionId]*Session{s.id: s},
		out:      &agentWriter{w: w},
	}
	s.agent = a
	a.gate = gate.New(r, gate.Limit, func(int) {})
	a.fast = &fastFS{a: a}
	a.gate.Intercept = a.fast.intercept
	a.conn = acp.NewConnection(a.handle, a.out, a.gate)
	return a
}

func (f *fsBench) read(ctx context.Context, path string, line, limit int) (string, error) {
	req := acp.ReadTextFileRequest{SessionId: "bench", Path: path}
	if line > 0 {
		req.Line = &line
	}
	if limit > 0 {
		req.Limit = &limit
	}
	resp, err := acp.SendRequest[acp.ReadTextFileResponse](f.agent, ctx, acp.ClientMethodFsReadTextFile, req)
	return resp.Content, err
}

// files creates the benchmark's files: a 10,000-line file loaded in a
// buffer, and an unloaded 1 MiB file.
func (f *fsBench) files(b *testing.B) (loaded, unloaded string) {
	b.Helper()
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "line %05d: the quick brown fox jumps over the lazy dog\n", i)
	}
	loaded = filepath.Join(f.ws, "loaded.txt")
	if err := os.WriteFile(loaded, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := f.nv.ExecLua(`vim.cmd.edit(...)`, nil, loaded); err != nil {
		b.Fatal(err)
	}
	unloaded = filepath.Join(f.ws, "unloaded.txt")
	line := strings.Repeat("x", 63) + "\n"
	if err := os.WriteFile(unloaded, []byte(strings.Repeat(line, (1<<20)/64)), 0o644); err != nil {
		b.Fatal(err)
	}
	return loaded, unloaded
}

func latencyPercentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}

func reportLatency(b *testing.B, lat []time.Duration) {
	b.ReportMetric(float64(latencyPercentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(latencyPercentile(lat, 0.99).Microseconds()), "p99-µs")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFSReadRoundTrip measures fs/read_text_file as the agent sees it
// (request sent to response decoded), one request at a time. Run with
// -benchtime 1000x for 1,000 requests.
func BenchmarkFSReadRoundTrip(b *testing.B) {
	f := newFSBench(b)
	defer f.closer()
	loaded, unloaded := f.files(b)
	// Files no buffer holds, as agents mostly read (issue 22).
	u100, u10k := filepath.Join(f.ws, "u100.txt"), filepath.Join(f.ws, "u10k.txt")
	for path, n := range map[string]int{u100: 100, u10k: 10000} {
		if err := os.WriteFile(path, []byte(strings.Repeat(strings.Repeat("y", 55)+"\n", n)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, c := range []struct {
		name        string
		path        string
		line, limit int
		size        int // expected content length
	}{
		{"loaded-10000-lines", loaded, 0, 0, 560000},
		{"loaded-10000-lines-limit-2000", loaded, 1, 2000, 112000},
		{"unloaded-100-lines", u100, 0, 0, 5600},
		{"unloaded-10000-lines", u10k, 0, 0, 560000},
		{"unloaded-1MiB", unloaded, 0, 0, 1 << 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			if got, err := f.read(ctx, c.path, c.line, c.limit); err != nil || len(got) != c.size {
				b.Fatalf("warm-up read: %d bytes, %v (want %d)", len(got), err, c.size)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := f.read(ctx, c.path, c.line, c.limit); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}

// BenchmarkFSReadHandler is BenchmarkFSReadRoundTrip without the ACP
// transport: the request's handler called directly (params decoding, the
// bridge, a Neovim round trip for loaded buffers; no response encoding).
func BenchmarkFSReadHandler(b *testing.B) {
	f := newFSBench(b)
	defer f.closer()
	loaded, unloaded := f.files(b)
	ctx := context.Background()
	for _, c := range []struct{ name, path string }{
		{"loaded-10000-lines", loaded},
		{"unloaded-1MiB", unloaded},
	} {
		b.Run(c.name, func(b *testing.B) {
			params, _ := json.Marshal(acp.ReadTextFileRequest{SessionId: "bench", Path: c.path})
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := requests[acp.ClientMethodFsReadTextFile](ctx, f.s.agent, params); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkFSReadConcurrent sends 50 fs/read_text_file requests at once per
// iteration; p50/p99 are over every request's latency, batch-ms is the
// mean wall time of a batch of 50.
func BenchmarkFSReadConcurrent(b *testing.B) {
	const n = 50
	f := newFSBench(b)
	defer f.closer()
	loaded, unloaded := f.files(b)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		path string
	}{
		{"loaded-10000-lines", loaded},
		{"unloaded-1MiB", unloaded},
	} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := f.read(ctx, c.path, 0, 0); err != nil {
				b.Fatal(err)
			}
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N*n)
			var batches time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				errs := make(chan error, n)
				start := time.Now()
				for j := 0; j < n; j++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						t0 := time.Now()
						if _, err := f.read(ctx, c.path, 0, 0); err != nil {
							errs <- err
							return
						}
						d := time.Since(t0)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					}()
				}
				wg.Wait()
				batches += time.Since(start)
				close(errs)
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportLatency(b, lat)
			b.ReportMetric(float64(batches.Microseconds())/1000/float64(b.N), "batch-ms")
		})
	}
}

// fastBench is the host's side of fs/* as a real agent connection drives it
// (gate, fast path, agentWriter), with a raw "agent" that writes request
// lines and reads response lines without decoding them: what remains is the
// host's own cost.
type fastBench struct {
	*fsBench
	a        *Agent
	toHost   io.Writer
	fromHost *bufio.Reader
	pipe     *os.File // fromHost's pipe
}

func newFastBench(b testing.TB) *fastBench {
	f := newFSBench(b)
	a2hR, a2hW := io.Pipe()
	// The host writes to the agent through a pipe, as to an agent's stdin:
	// reads can then be answered on the gate's reader (fastFS.serveNow).
	h2aR, h2aW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	a := benchAgent(f.s, a2hR, newPipeWriter(b, h2aW))
	closer := f.closer
	f.closer = func() {
		a2hW.Close()
		h2aW.Close()
		close(a.exited)
		closer()
	}
	return &fastBench{fsBench: f, a: a, toHost: a2hW, fromHost: bufio.NewReaderSize(h2aR, 16<<20), pipe: h2aR}
}

// roundTrip sends one request line and returns the response line.
func (f *fastBench) roundTrip(b testing.TB, line []byte) []byte {
	if _, err := f.toHost.Write(line); err != nil {
		b.Fatal(err)
	}
	resp, err := f.fromHost.ReadSlice('\n')
	if err != nil {
		b.Fatal(err)
	}
	return resp
}

// BenchmarkFSFastPath: host-side latency of fs/* requests through the gate
// and the fast path, against a real Neovim with the files loaded (the
// 10,000-line buffer is 560 KB here).
func BenchmarkFSFastPath(b *testing.B) {
	f := newFastBench(b)
	defer f.closer()
	// Files no buffer holds (issue 22), written first: the cases before
	// theirs leave them more than textcache.Settle old, as files an agent
	// reads mostly are.
	u100, u10k := filepath.Join(f.ws, "u100.txt"), filepath.Join(f.ws, "u10k.txt")
	for path, n := range map[string]int{u100: 100, u10k: 10000} {
		if err := os.WriteFile(path, []byte(strings.Repeat("\tlog.Printf(\"the quick brown fox\\n\", x) // jumps over the lazy dog\n", n)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	loaded, _ := f.files(b)
	small := filepath.Join(f.ws, "small.txt")
	var sb strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&sb, "line %05d: the quick brown fox jumps over the lazy dog\n", i)
	}
	if err := os.WriteFile(small, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := f.nv.ExecLua(`vim.cmd.edit(...)`, nil, small); err != nil {
		b.Fatal(err)
	}
	text, _ := os.ReadFile(loaded)
	edited := strings.Replace(string(text), "line 00100:", "line 0010X:", 1)
	// The same file again in a buffer with an unsaved line, as an agent
	// mostly finds the files the user has open: its writes leave that
	// line unsaved and write the file themselves (fsbridge applyUnsaved).
	unsaved := filepath.Join(f.ws, "unsaved.txt")
	if err := os.WriteFile(unsaved, text, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := f.nv.ExecLua(`vim.cmd.edit(...)
		vim.api.nvim_buf_set_text(0, -1, 0, -1, 0, { "// unsaved" })`, nil, unsaved); err != nil {
		b.Fatal(err)
	}
	// Read first, as agents do before they write.
	readUnsaved, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 0, "method": acp.ClientMethodFsReadTextFile,
		"params": acp.ReadTextFileRequest{SessionId: "bench", Path: unsaved}})
	if resp := f.roundTrip(b, append(readUnsaved, '\n')); !bytes.Contains(resp, []byte(`"result"`)) {
		b.Fatalf("read: %.200s", resp)
	}
	req := func(id int, method string, params any) []byte {
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		return append(line, '\n')
	}
	for _, c := range []struct {
		name string
		line func(i int) []byte
	}{
		{"read-100-lines", func(i int) []byte {
			return req(i, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionId: "bench", Path: small})
		}},
		{"read-10000-lines", func(i int) []byte {
			return req(i, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionId: "bench", Path: loaded})
		}},
		{"write-10000-lines-3-changed", func(i int) []byte {
			content := string(text)
			if i%2 == 0 {
				content = edited
			}
			return req(i, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionId: "bench", Path: loaded, Content: content})
		}},
		{"write-10000-lines-unsaved-line", func(i int) []byte {
			// The text the agent read, the unsaved line in it, with a line
			// changed or not.
			content := strings.Replace(string(text), "line 09999:", "// unsavedline 09999:", 1)
			if i%2 == 0 {
				content = strings.Replace(content, "line 00100:", "line 0010X:", 1)
			}
			return req(i, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionId: "bench", Path: unsaved, Content: content})
		}},
		{"read-unloaded-100-lines", func(i int) []byte {
			return req(i, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionId: "bench", Path: u100})
		}},
		{"read-unloaded-10000-lines", func(i int) []byte {
			return req(i, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionId: "bench", Path: u10k})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Two request lines, reused: b.N copies of a 700 KB write would
			// grow the heap until every decode writes to fresh pages.
			lines := [][]byte{c.line(0), c.line(1)}
			if resp := f.roundTrip(b, lines[1]); !bytes.Contains(resp, []byte(`"result"`)) {
				b.Fatalf("warm-up: %.200s", resp)
			}
			var nvimPid int
			if err := f.nv.ExecLua(`return vim.fn.getpid()`, &nvimPid); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			goCPU, _ := cputime.Process(0)
			nvimCPU, _ := cputime.Process(nvimPid)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				f.roundTrip(b, lines[i%2])
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			goCPU2, _ := cputime.Process(0)
			nvimCPU2, _ := cputime.Process(nvimPid)
			reportLatency(b, lat)
			b.ReportMetric(float64(goCPU2-goCPU)/float64(b.N)/1e3, "host-cpu-µs/op")
			b.ReportMetric(float64(nvimCPU2-nvimCPU)/float64(b.N)/1e3, "nvim-cpu-µs/op")
		})
	}
}

// pipeWriter is the write end of an os.Pipe as the agent's stdin is to
// the host (transport.Process): a tryWriter.
type pipeWriter struct {
	*os.File
	raw *transport.RawWriter
}

func newPipeWriter(b testing.TB, f *os.File) *pipeWriter {
	raw, err := f.SyscallConn()
	if err != nil {
		b.Fatal(err)
	}
	return &pipeWriter{File: f, raw: transport.NewRawWriter(raw)}
}

func (p *pipeWriter) CanTryWrite() bool                 { return true }
func (p *pipeWriter) TryWrite(b ...[]byte) (int, error) { return p.raw.TryWrite(b...) }
func (p *pipeWriter) WriteRest(b []byte) (int, error)   { return p.Write(b) }
