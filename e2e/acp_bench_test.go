package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
)

// BenchmarkACP measures nvim-acp as an agent sees it, against a reference
// client in the same run: testdata/benchagent (a plain acp-go-sdk agent)
// sends each request and times it until its response is decoded, once to
// nvim-acp (real Neovim, real host, a real session) and once to
// testdata/refclient, which answers reads from bytes encoded once and
// writes with an empty result. The reference is the floor: the agent's own
// encoding and decoding plus the pipe. Every figure is printed with its
// ratio to the floor and what nvim-acp adds above it; the terminal figure is
// compared with script(1) running the same command into /dev/null.
//
//	NVIM_BIN=... go test -run '^$' -bench ACP -benchtime 1x ./e2e/
//
// BENCH_AGENT=raw runs the read and write cases with testdata/rawagent,
// which neither uses an SDK nor decodes while timed, against the same
// refclient: the floor's pair, where a client's own cost shows whole.
// BENCH_CASES picks cases (see below); NVIM_ACP_CPUPROFILE=FILE makes the
// host write a CPU profile. BENCH_ROUNDS (default 3) splits each case into alternating rounds of
// reference and nvim-acp, so both see the same machine load. BENCH_UI=1
// attaches a 200x50 UI to Neovim first (every redraw of the chat happens).
// BENCH_JSONL=FILE keeps the agent's output: each prompt's latencies.
// BENCH_THINK (default 20ms) is how long both agents wait after a prompt
// before their first request, as a model does: a client's own work on the
// prompt is done by then, in use as here. BENCH_AA=1 puts a second floor
// in nvim-acp's place: the ratios then show the measurement's own spread.
// BENCH_SANDBOX=0 runs the terminal case's command outside the sandbox;
// BENCH_TERM_BYTES (default 50 MiB) is how much it writes.
func BenchmarkACP(b *testing.B) {
	bins := benchBinaries(b)
	agentName := "benchagent"
	if os.Getenv("BENCH_AGENT") == "raw" {
		// The floor's agent: no SDK, nothing decoded while timed (reads
		// and writes only).
		bins.agent, agentName = bins.raw, "rawagent"
	}
	e := startEditor(b)
	if os.Getenv("BENCH_UI") == "1" {
		attachUI(e, 200, 50)
	}
	ws := e.Dir
	f10k := filepath.Join(ws, "f10k.txt")
	f100 := filepath.Join(ws, "f100.txt")
	writeBenchFile(b, f10k, 10000)
	writeBenchFile(b, f100, 100)
	// Files no buffer holds: agents mostly read those.
	u10k := filepath.Join(ws, "u10k.txt")
	u100 := filepath.Join(ws, "u100.txt")
	writeBenchFile(b, u10k, 10000)
	writeBenchFile(b, u100, 100)
	// A file no buffer holds, written again before each prompt: younger
	// than textcache.Settle (1 s) when read, as a file the agent or the
	// user has just written.
	y100 := filepath.Join(ws, "y100.txt")
	writeBenchFile(b, y100, 100)
	out := filepath.Join(e.state, "bench.jsonl")
	// The agents wait this long after a prompt before their first
	// request, as a model does before its first tool call (BENCH_THINK,
	// a duration; 0 for none).
	think := "20ms"
	if v := os.Getenv("BENCH_THINK"); v != "" {
		think = v
	}
	opts := map[string]any{
		"agents": map[string]any{"bench": map[string]any{
			"cmd": []string{bins.agent},
			"env": map[string]string{"BENCH_AGENT_OUT": out, "BENCH_THINK": think},
		}},
		"default_agent": "bench",
		// The terminal case's command runs unasked, as for a user who
		// allows commands (auto_allow "execute"): the benchmark times the
		// terminal, not a prompt.
		"permissions": map[string]any{"focus_guard_ms": 0, "auto_allow": []string{"execute"}},
	}
	if os.Getenv("BENCH_SANDBOX") == "0" {
		// Commands outside the sandbox (bubblewrap): what it costs them.
		opts["sandbox"] = map[string]any{"enabled": false}
	}
	e.setup(opts)
	// Both files loaded in buffers, each with an unsaved edit on its last
	// line, so a read that went to the disk would differ.
	e.Lua(`for _, f in ipairs({...}) do
		vim.cmd.edit(f)
		vim.api.nvim_buf_set_text(0, -1, 0, -1, 0, { "// unsaved" })
	end`, nil, f10k, f100)
	e.Chat("bench")
	e.WaitState("ready")
	var version string
	e.Lua(`return vim.fn.execute("version"):match("NVIM v[^\n]*")`, &version)

	rounds := 3
	if s := os.Getenv("BENCH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	hostPid := e.hostPid()
	var nvimPid int
	e.Lua(`return vim.fn.getpid()`, &nvimPid)
	clientCPU := func() (host, nvim time.Duration) {
		h, err1 := cputime.Process(hostPid)
		n, err2 := cputime.Process(nvimPid)
		if err1 != nil || err2 != nil {
			b.Fatalf("cpu time: %v %v", err1, err2)
		}
		return h, n
	}
	// A turn's end is told to the benchmark (User AcpState), not polled
	// for: a poll every 20 ms woke Neovim and this process inside
	// nvim-acp's prompts only (the floor's were waited on without).
	states := make(chan string, 64)
	if err := e.nv.RegisterHandler("bench_state", func(state string) { states <- state }); err != nil {
		b.Fatal(err)
	}
	e.Lua(`local chan = ...
		vim.api.nvim_create_autocmd("User", { pattern = "AcpState", callback = function(ev)
			vim.rpcnotify(chan, "bench_state", ev.data and ev.data.state or "")
		end })`, nil, e.nv.ChannelID())
	ours := func(prompt string) benchRun {
		for len(states) > 0 {
			<-states
		}
		h0, n0 := clientCPU()
		e.Send(prompt)
		for done := false; !done; {
			select {
			case st := <-states:
				done = st != "busy" && e.Status().State != "busy"
			case <-time.After(10 * time.Minute):
				b.Fatalf("nvim-acp: %q still busy after 10 minutes", prompt)
			}
		}
		h1, n1 := clientCPU()
		if st := e.Status(); st.StopReason != "end_turn" {
			b.Fatalf("nvim-acp: %q ended %+v", prompt, st)
		}
		return benchRun{lastBenchResult(b, out), h1 - h0, n1 - n0}
	}
	// A floor keeps its agent and its session between prompts, as
	// nvim-acp does: both are timed in the same steady state.
	startFloor := func(name string) func(prompt string) benchRun {
		cpuFile := filepath.Join(e.state, name+".cpu")
		floor := startRefClient(b, bins, ws, cpuFile, "BENCH_AGENT_OUT="+out, "BENCH_THINK="+think)
		b.Cleanup(func() { floor.stop(b) })
		return func(prompt string) benchRun {
			floor.prompt(b, prompt)
			var ns int64
			if c, err := os.ReadFile(cpuFile); err != nil {
				b.Fatal(err)
			} else {
				fmt.Sscan(string(c), &ns)
			}
			return benchRun{lastBenchResult(b, out), time.Duration(ns), 0}
		}
	}
	ref := startFloor("refclient")
	if os.Getenv("BENCH_AA") == "1" {
		// The floor against itself: a second reference client in
		// nvim-acp's place, so the report's ratios show what the
		// measurement alone spreads by (Neovim and the host stay idle).
		ours = startFloor("refclient2")
	}
	// both runs n requests (n/per prompts of per requests each; per = 1
	// for readc, whose latencies are per batch of 50) in alternating rounds.
	both := func(prompt string, n, each int) (o, r benchRuns) {
		per := max(n/rounds, 1)
		for i := 0; i < rounds; i++ {
			p := fmt.Sprintf(prompt, per)
			r.add(ref(p), each)
			o.add(ours(p), each)
		}
		return o, r
	}

	// fresh is both with path written again before each prompt.
	fresh := func(path, prompt string, n int) (o, r benchRuns) {
		per := max(n/rounds, 1)
		for i := 0; i < rounds; i++ {
			p := fmt.Sprintf(prompt, per)
			writeBenchFile(b, path, 100)
			r.add(ref(p), 1)
			writeBenchFile(b, path, 100)
			o.add(ours(p), 1)
		}
		return o, r
	}

	// BENCH_CASES (default all): read10k,read100,read10ku,read100u,
	// read100y,slice,write,readc,term.
	want := func(c string) bool {
		if agentName == "rawagent" && (c == "readc" || c == "term") {
			return false // reads and writes only
		}
		v := os.Getenv("BENCH_CASES")
		return v == "" || strings.Contains(","+v+",", ","+c+",")
	}
	var rep benchReport
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep = benchReport{}
		// Warm up both (first reads fill caches, the host starts its bridge).
		ours(fmt.Sprintf("read %s 5", f10k))
		ours(fmt.Sprintf("read %s 5", f100))
		ref(fmt.Sprintf("read %s 5", f10k))
		var seq10k, seqRef time.Duration
		if want("read10k") || want("readc") {
			o, r := both("read "+f10k+" %d", 300, 1)
			seq10k, seqRef = p50(o.lat), p50(r.lat)
			rep.row("read, 10,000-line buffer (660 KB), 300 sequential", o, r)
		}
		if want("read100") {
			o, r := both("read "+f100+" %d", 300, 1)
			rep.row("read, 100-line buffer (6.6 KB), 300 sequential", o, r)
		}
		if want("read10ku") {
			ours(fmt.Sprintf("read %s 5", u10k))
			o, r := both("read "+u10k+" %d", 300, 1)
			rep.row("read, 10,000-line file no buffer holds (660 KB), 300 sequential", o, r)
		}
		if want("read100u") {
			ours(fmt.Sprintf("read %s 5", u100))
			// Older than textcache.Settle, as files an agent reads mostly
			// are (on a quiet machine the cases before take less).
			waitOlder(b, u100, time.Second)
			o, r := both("read "+u100+" %d", 300, 1)
			rep.row("read, 100-line file no buffer holds (6.6 KB), 300 sequential", o, r)
		}
		if want("read100y") {
			ours(fmt.Sprintf("read %s 5", y100))
			o, r := fresh(y100, "read "+y100+" %d", 300)
			rep.row("read, 100-line file no buffer holds, written again before each prompt (younger than 1 s), 300 sequential", o, r)
		}
		if want("slice") {
			o, r := both("read "+f10k+" %d 1 2000", 300, 1)
			rep.row("read line 1 limit 2000 of the 10,000-line buffer", o, r)
		}
		if want("write") {
			o, r := both("write "+f10k+" %d", 100, 1)
			rep.row("write, 3 lines changed in the 10,000-line buffer, 100 sequential", o, r)
			// What saving the buffer costs Neovim itself, in every such write.
			var w struct {
				Med   float64 `msgpack:"med"`
				Fsync bool    `msgpack:"fsync"`
			}
			e.Lua(`local b = vim.fn.bufnr(...)
				local t = {}
				for i = 1, 21 do
					vim.api.nvim_buf_set_lines(b, 100, 101, true, { "timed write " .. i })
					local t0 = vim.uv.hrtime()
					vim.api.nvim_buf_call(b, function() vim.cmd("silent keepalt lockmarks write!") end)
					t[#t + 1] = (vim.uv.hrtime() - t0) / 1e6
				end
				table.sort(t)
				return { med = t[11], fsync = vim.o.fsync }`, &w, f10k)
			rep.line(fmt.Sprintf("    of which Neovim's own :write of that buffer ('fsync' %v): %.3f ms median", w.Fsync, w.Med))
		}
		if want("readc") {
			o, r := both("readc "+f10k+" 50 %d", 6, 50)
			rep.row("50 concurrent reads of the 10,000-line buffer (per batch)", o, r)
			cores := runtime.NumCPU()
			bound := func(seq time.Duration) time.Duration { return time.Duration(float64(50*seq) / float64(cores)) }
			rep.line(fmt.Sprintf("    batch p50 / (50 x sequential p50 / %d cores): nvim-acp %s / %s = %.2fx (target <= 1.5x); the reference %s / %s = %.2fx",
				cores, ms(p50(o.lat)), ms(bound(seq10k)), float64(p50(o.lat))/float64(bound(seq10k)),
				ms(p50(r.lat)), ms(bound(seqRef)), float64(p50(r.lat))/float64(bound(seqRef))))
		}
		if want("term") {
			rep.terminal(b, bins, ours, envPositive("BENCH_TERM_BYTES", 52428800), max(rounds, 3))
		}
	}
	b.StopTimer()
	if keep := os.Getenv("BENCH_JSONL"); keep != "" {
		// Every prompt's own latencies, the reference's and nvim-acp's
		// alternating, for a closer look than the p50.
		if data, err := os.ReadFile(out); err != nil || os.WriteFile(keep, data, 0o644) != nil {
			b.Errorf("keep %s as %s: %v", out, keep, err)
		}
	}
	// Printed, not logged: the testing package cuts long benchmark logs.
	fmt.Printf("\n%s, %d cores, %s, %s, agent %s, load average %s\n%s\n", version, runtime.NumCPU(), runtime.GOARCH,
		time.Now().Format("2006-01-02 15:04"), agentName, loadavg(), rep.String())
	b.ReportMetric(0, "ns/op")
}

// refClient is testdata/refclient serving prompts (-serve): one agent,
// one session.
type refClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr string // the file its stderr goes to
}

// startRefClient starts the floor's client on the bench's agent in ws.
func startRefClient(b *testing.B, bins benchBins, ws, cpuFile string, env ...string) *refClient {
	cmd := exec.Command(bins.ref, "-cwd", ws, "-serve", "-cpu", cpuFile, "--", bins.agent)
	cmd.Env = append(os.Environ(), env...)
	r := &refClient{cmd: cmd, stderr: filepath.Join(b.TempDir(), "refclient.stderr")}
	errFile, err := os.Create(r.stderr)
	if err != nil {
		b.Fatal(err)
	}
	defer errFile.Close() // the child has its copy
	cmd.Stderr = errFile
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("refclient: %v", err)
	}
	r.in, r.out = in, bufio.NewReader(out)
	return r
}

// said is what the floor's client wrote to stderr.
func (r *refClient) said() string {
	data, _ := os.ReadFile(r.stderr)
	return string(data)
}

// prompt has the floor send prompt and waits until the agent answered it.
func (r *refClient) prompt(b *testing.B, prompt string) {
	if _, err := fmt.Fprintln(r.in, prompt); err != nil {
		b.Fatalf("refclient %q: %v\n%s", prompt, err, r.said())
	}
	if line, err := r.out.ReadString('\n'); err != nil || line != "done\n" {
		b.Fatalf("refclient %q: %q, %v\n%s", prompt, line, err, r.said())
	}
}

// stop ends the floor's client (its stdin closed) and its agent.
func (r *refClient) stop(b *testing.B) {
	r.in.Close()
	if err := r.cmd.Wait(); err != nil {
		b.Errorf("refclient: %v\n%s", err, r.said())
	}
}

// waitOlder waits until path, written by writeBenchFile (its change
// time is its modification time), was written more than age ago.
func waitOlder(b *testing.B, path string, age time.Duration) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	if d := time.Until(fi.ModTime().Add(age + 10*time.Millisecond)); d > 0 {
		time.Sleep(d) // the file's age, not synchronisation
	}
}

type benchBins struct{ agent, ref, raw string }

var (
	benchOnce  sync.Once
	benchBuilt benchBins
	benchErr   error
)

// benchBinaries builds testdata/benchagent and testdata/refclient once.
func benchBinaries(b testing.TB) benchBins {
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nvim-acp-bench-bin")
		if err != nil {
			benchErr = err
			return
		}
		benchBuilt = benchBins{agent: filepath.Join(dir, "benchagent"), ref: filepath.Join(dir, "refclient"), raw: filepath.Join(dir, "rawagent")}
		for out, pkg := range map[string]string{benchBuilt.agent: "./testdata/benchagent", benchBuilt.ref: "./testdata/refclient", benchBuilt.raw: "./testdata/rawagent"} {
			cmd := exec.Command("go", "build", "-o", out, pkg)
			cmd.Dir = root
			if o, err := cmd.CombinedOutput(); err != nil {
				benchErr = fmt.Errorf("build %s: %v\n%s", pkg, err, o)
				return
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchBuilt
}

// writeBenchFile writes n lines of 66 bytes of Go-like text (quotes, a tab
// and a backslash on each line, as source code has).
func writeBenchFile(b *testing.B, path string, n int) {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		l := fmt.Sprintf("\tlog.Printf(\"line %05d: the quick brown fox\\n\", x) // jumps over the lazy dog", i)
		sb.WriteString(l[:65])
		sb.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

type benchResult struct {
	Op    string  `json:"op"`
	N     int     `json:"n"`
	Bytes int     `json:"bytes"`
	Lat   []int64 `json:"lat_ns"`
	CPU   int64   `json:"cpu_ns"`
	Error string  `json:"error"`
}

func (r benchResult) lat() []time.Duration {
	out := make([]time.Duration, len(r.Lat))
	for i, v := range r.Lat {
		out[i] = time.Duration(v)
	}
	return out
}

// lastBenchResult is the bench agent's last output line.
func lastBenchResult(b *testing.B, path string) benchResult {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		last = sc.Text()
	}
	var r benchResult
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		b.Fatalf("bench output %q: %v", last, err)
	}
	if r.Error != "" {
		b.Fatalf("bench agent: %s", r.Error)
	}
	return r
}

func p50(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/1e6) }

type benchReport struct{ lines []string }

func (r *benchReport) line(s string) { r.lines = append(r.lines, s) }

func (r *benchReport) row(what string, ours, ref benchRuns) {
	o, f := p50(ours.lat), p50(ref.lat)
	r.line(fmt.Sprintf("%s\n    latency p50: nvim-acp %s, reference %s = %.2fx, %+.3f ms above the floor",
		what, ms(o), ms(f), float64(o)/float64(f), float64(o-f)/1e6))
	per := func(d time.Duration, n int) string { return us(d / time.Duration(n)) }
	r.line(fmt.Sprintf("    CPU per request: nvim-acp host %s + Neovim %s, reference client %s; the agent %s with nvim-acp, %s with the reference",
		per(ours.clientCPU, ours.n), per(ours.nvimCPU, ours.n), per(ref.clientCPU, ref.n),
		per(ours.agentCPU, ours.n), per(ref.agentCPU, ref.n)))
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/1e3) }

// benchRun is one prompt's results and the client's CPU time over it.
type benchRun struct {
	benchResult
	clientCPU time.Duration // the host's, or the reference client's
	nvimCPU   time.Duration
}

// benchRuns are the runs of one case.
type benchRuns struct {
	lat                          []time.Duration
	n                            int // requests
	clientCPU, nvimCPU, agentCPU time.Duration
}

func (rs *benchRuns) add(r benchRun, each int) {
	rs.lat = append(rs.lat, r.lat()...)
	rs.n += max(len(r.Lat), 1) * each
	rs.clientCPU += r.clientCPU
	rs.nvimCPU += r.nvimCPU
	rs.agentCPU += time.Duration(r.CPU)
}

// terminal compares a 50 MB command run through nvim-acp's terminal/*
// (shown live in Neovim) with script(1) running it into /dev/null.
func (r *benchReport) terminal(b *testing.B, bins benchBins, ours func(string) benchRun, size, n int) {
	if _, err := exec.LookPath("script"); err != nil {
		r.line("terminal: script(1) not installed, skipped")
		return
	}
	var o, s []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		cmd := exec.Command("script", "-qfc", fmt.Sprintf("head -c %d /dev/zero", size), "/dev/null")
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = devnull
		if err := cmd.Run(); err != nil {
			b.Fatalf("script: %v", err)
		}
		devnull.Close()
		s = append(s, time.Since(t0))
		o = append(o, ours(fmt.Sprintf("term %d 1", size)).lat()...)
	}
	mbps := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	r.line(fmt.Sprintf("terminal, `head -c %d /dev/zero`, create to exit: nvim-acp %.0f MB/s (%s), script(1) %.0f MB/s (%s) = %.2fx of script (target >= 0.8x, issue 34)",
		size, mbps(p50(o)), ms(p50(o)), mbps(p50(s)), ms(p50(s)), float64(p50(s))/float64(p50(o))))
}

func (r benchReport) String() string { return strings.Join(r.lines, "\n") }
