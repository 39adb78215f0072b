package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/cputime"
)

// Benchmarks of agents reached over the network (issue 20), each transport
// against stdio in the same run, in alternating rounds so that all see the
// same machine load:
//
//	NVIM_BIN=... go test -run '^$' -bench 'Remote' -benchtime 1x ./e2e/
//
// BENCH_ROUNDS (default 3) rounds per transport. BENCH_SERVER_SNDBUF
// holds the fake servers' kernel send buffers, and the RFD emulation's
// queue of each event stream, at that many bytes (fakeserver -sndbuf;
// 65536 is a pipe's): the marker over the network counts what the server
// keeps queued while the client is behind (make bench runs the stream both
// ways). BENCH_NICE_AGENT=1 runs the agent's side (the agent over stdio,
// the server over the network) at nice 19.

// benchTransports: stdio, then every network profile; BENCH_TRANSPORTS
// (names, comma-separated) picks some.
var benchTransports = pick(append([]remoteProfile{{name: "stdio"}}, remoteProfiles...), func(p remoteProfile) string { return p.name })

// streamTransport is a transport of the stream benchmark: a network one is
// measured twice, its fake server relaying an agent process's stdio (as
// the other e2e tests run it) and playing the scenario in its own process
// (-inproc: the server's own cost is then that of a server with its agent
// inside, the figures the client's).
type streamTransport struct {
	remoteProfile
	inproc bool
}

func (t streamTransport) name() string {
	if t.inproc {
		return t.remoteProfile.name + "/inproc"
	}
	return t.remoteProfile.name
}

var streamTransports = func() []streamTransport {
	var all []streamTransport
	for _, p := range append([]remoteProfile{{name: "stdio"}}, remoteProfiles...) {
		all = append(all, streamTransport{remoteProfile: p})
		if p.name != "stdio" {
			all = append(all, streamTransport{remoteProfile: p, inproc: true})
		}
	}
	return pick(all, streamTransport.name)
}()

// pick keeps the transports BENCH_TRANSPORTS names (all when unset).
func pick[T any](all []T, name func(T) string) []T {
	want := os.Getenv("BENCH_TRANSPORTS")
	if want == "" {
		return all
	}
	var out []T
	for _, p := range all {
		for _, w := range strings.Split(want, ",") {
			if strings.TrimSpace(w) == name(p) {
				out = append(out, p)
			}
		}
	}
	return out
}

func benchRounds() int {
	rounds := 3
	if s := os.Getenv("BENCH_ROUNDS"); s != "" {
		fmt.Sscan(s, &rounds)
	}
	return rounds
}

// BenchmarkRemoteStream is issue 9's BenchmarkUIStream/empty (20,000 chunks
// of markdown as fast as the agent sends them, then a marker; a UI
// attached, a second client pinging Neovim) over each transport: the
// worst longest block of Neovim and the worst time from the agent's marker
// to the screen.
func BenchmarkRemoteStream(b *testing.B) {
	rounds := benchRounds()
	worsts := map[string]*worst{}
	turns := map[string]time.Duration{}
	cpus := map[string]streamCPU{}
	for _, p := range streamTransports {
		worsts[p.name()] = &worst{}
	}
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			for _, p := range streamTransports {
				u := startUIEditor(b)
				burst := append([]any{M{"chunks": 20000, "cycle": burstCycle}}, marked("BURST-DONE")...)
				sc := M{"turns": []any{burst}}
				var srv *fakeServer
				switch {
				case p.name() == "stdio":
					u.SetupFake(sc, benchOptions())
				case p.inproc:
					srv = u.SetupRemote(p.remoteProfile, sc, nil, benchOptions(), append(serverSndbuf(), "-inproc")...)
				default:
					srv = u.SetupRemote(p.remoteProfile, sc, nil, benchOptions(), serverSndbuf()...)
				}
				u.Chat("fake")
				u.WaitState("ready")
				// The agent's side: the agent process on stdio, the server and
				// its agent over the network.
				host := u.hostPid()
				agentSide := []int{host}
				if srv != nil {
					agentSide = []int{srv.cmd.Process.Pid}
				}
				if os.Getenv("BENCH_NICE_AGENT") != "" {
					side := agentSide // the server
					if srv == nil {
						side = procChildren(host) // the agent, not the host
					}
					niceAll(side)
				}
				cpu0 := takeCPU(b, u.pid, host, agentSide)
				start := time.Now()
				f := u.runMarked(b, "burst", "BURST-DONE")
				cpu := takeCPU(b, u.pid, host, agentSide).sub(cpu0)
				// The marker is logged when the agent has written every chunk;
				// what the path between (a server, sockets) buffers is still
				// on its way: the whole turn says more.
				turn := u.markTime("BURST-DONE").Add(f.marker).Sub(start)
				// On stdout: go test keeps only the end of a benchmark's log.
				fmt.Printf("round %d %s: max block %v, marker %v, send to marker %v; CPU %v; load %s\n", r+1, p.name(),
					f.maxBlock.Round(time.Millisecond), f.marker.Round(time.Millisecond), turn.Round(time.Millisecond), cpu, loadavg())
				worsts[p.name()].add(b, f)
				turns[p.name()] = max(turns[p.name()], turn)
				cpus[p.name()] = cpus[p.name()].max(cpu)
				u.nv.Close()
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n20,000 chunks then a marker, UI attached (worst of %d rounds), %d cores, load %s\n", rounds, runtime.NumCPU(), loadavg())
	fmt.Fprintf(&sb, "%-22s %14s %12s %20s %14s %28s\n", "transport", "max block ms", "marker ms", "send to marker ms", "peak RSS MiB",
		"CPU ms nvim/host/agent side")
	for _, p := range streamTransports {
		w := worsts[p.name()].f
		c := cpus[p.name()]
		fmt.Fprintf(&sb, "%-22s %14.1f %12.1f %20.1f %14.0f %28s\n", p.name(), float64(w.maxBlock.Microseconds())/1000,
			float64(w.marker.Microseconds())/1000, float64(turns[p.name()].Microseconds())/1000, w.rss,
			fmt.Sprintf("%d / %d / %d", c.nvim.Milliseconds(), c.host.Milliseconds(), c.agent.Milliseconds()))
	}
	fmt.Print(sb.String())
	b.ReportMetric(0, "ns/op")
}

// streamCPU is the CPU time of the three parties of a stream: Neovim, the
// host, and the agent's side (the agent process on stdio; the server and
// every process under it over the network).
type streamCPU struct{ nvim, host, agent time.Duration }

func (c streamCPU) String() string {
	return fmt.Sprintf("nvim %v, host %v, agent side %v", c.nvim.Round(time.Millisecond),
		c.host.Round(time.Millisecond), c.agent.Round(time.Millisecond))
}

func (c streamCPU) sub(o streamCPU) streamCPU {
	return streamCPU{c.nvim - o.nvim, c.host - o.host, c.agent - o.agent}
}

// max is the worst of each figure (the table's rows are worsts).
func (c streamCPU) max(o streamCPU) streamCPU {
	return streamCPU{max(c.nvim, o.nvim), max(c.host, o.host), max(c.agent, o.agent)}
}

// takeCPU reads the CPU time used so far by Neovim, the host, and the
// children of each of agentParents (the host's agent on stdio) or the
// processes themselves when they are not the host (a server).
func takeCPU(b testing.TB, nvim, host int, agentParents []int) streamCPU {
	b.Helper()
	read := func(pid int) time.Duration {
		d, err := cputime.Process(pid)
		if err != nil {
			b.Fatalf("cpu time of %d: %v", pid, err)
		}
		return d
	}
	c := streamCPU{nvim: read(nvim), host: read(host)}
	for _, p := range agentParents {
		if p != host {
			c.agent += read(p)
		}
		for _, child := range procChildren(p) {
			c.agent += read(child)
		}
	}
	return c
}

// procChildren lists the live children of pid.
func procChildren(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// BenchmarkRemoteRead10k: fs/read_text_file of a 10,000-line buffer with
// an unsaved edit, 300 sequential reads timed by testdata/benchagent (sent
// to response decoded), the agent on stdio and served over each transport
// (testdata/fakeserver running the bench agent): p50 and p99, and the
// ratio of each p50 to stdio's (target: within 1.5x).
func BenchmarkRemoteRead10k(b *testing.B) {
	bins := benchBinaries(b)
	rounds := benchRounds()
	type editor struct {
		e   *Editor
		out string
		f   string
	}
	eds := map[string]editor{}
	for _, p := range benchTransports {
		e := startEditor(b)
		f := filepath.Join(e.Dir, "f10k.txt")
		writeBenchFile(b, f, 10000)
		out := filepath.Join(e.state, "bench.jsonl")
		spec := M{"cmd": []string{bins.agent}, "env": M{"BENCH_AGENT_OUT": out}}
		if p.name != "stdio" {
			srv := startServer(b, p.kind, []string{"BENCH_AGENT_OUT=" + out}, "-agent", bins.agent)
			spec = M{"url": p.url(srv.addr)}
			if p.transport != "" {
				spec["transport"] = p.transport
			}
		}
		e.setupAgent(spec, nil)
		e.Lua(`vim.cmd.edit(...); vim.api.nvim_buf_set_text(0, -1, 0, -1, 0, { "// unsaved" })`, nil, f)
		e.Chat("fake")
		e.WaitState("ready")
		eds[p.name] = editor{e, out, f}
	}
	run := func(ed editor, n int) benchResult {
		ed.e.Send(fmt.Sprintf("read %s %d", ed.f, n))
		ed.e.Eventually("bench turn", 10*time.Minute, func() bool { return ed.e.Status().State != "busy" })
		if st := ed.e.Status(); st.StopReason != "end_turn" {
			b.Fatalf("read turn ended %+v", st)
		}
		return lastBenchResult(b, ed.out)
	}
	lat := map[string][]time.Duration{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range benchTransports {
			run(eds[p.name], 5) // warm up: caches, the bridge
		}
		for r := 0; r < rounds; r++ {
			for _, p := range benchTransports {
				res := run(eds[p.name], 300/rounds)
				if res.Bytes < 650000 {
					b.Fatalf("%s: read %d bytes", p.name, res.Bytes)
				}
				lat[p.name] = append(lat[p.name], res.lat()...)
			}
		}
	}
	b.StopTimer()
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nfs/read_text_file, 10,000-line buffer (660 KB) with an unsaved edit, %d sequential per transport, %d cores, load %s\n",
		len(lat["stdio"]), runtime.NumCPU(), loadavg())
	fmt.Fprintf(&sb, "%-16s %10s %10s %14s\n", "transport", "p50 ms", "p99 ms", "p50 / stdio")
	base := percentile(lat["stdio"], 0.5)
	for _, p := range benchTransports {
		mid, tail := percentile(lat[p.name], 0.5), percentile(lat[p.name], 0.99)
		fmt.Fprintf(&sb, "%-16s %10.3f %10.3f %13.2fx\n", p.name, float64(mid)/1e6, float64(tail)/1e6, float64(mid)/float64(base))
	}
	fmt.Print(sb.String())
	b.ReportMetric(0, "ns/op")
}

// percentile is the p-th percentile of d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

// serverSndbuf is fakeserver's -sndbuf from BENCH_SERVER_SNDBUF, if set.
func serverSndbuf() []string {
	if n := os.Getenv("BENCH_SERVER_SNDBUF"); n != "" {
		return []string{"-sndbuf", n}
	}
	return nil
}

// niceAll runs every thread of pids at nice 19 (BENCH_NICE_AGENT: the
// agent's side). On a small machine the agent's side competes with Neovim
// for the same cores; niced, what is left of Neovim's blocks is the
// client's.
func niceAll(pids []int) {
	for _, p := range pids {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, e := range ents {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
			}
		}
	}
}
