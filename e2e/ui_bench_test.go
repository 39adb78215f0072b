package e2e

// UI-attached benchmarks of the chat (issue 9): a real Neovim with a 200x50
// UI attached through nvim_ui_attach (so every redraw really happens and is
// sent), a second RPC client pinging nvim_eval("1") every 5 ms (how long
// Neovim blocks), and the fake agent streaming as fast as it can write.
//
//	NVIM_BIN=... go test -run '^$' -bench UI -benchtime 3x ./e2e/
//
// Each iteration runs in a fresh Neovim; the metrics are the worst of the
// iterations: max-block-ms (longest ping), marker-ms (from the agent sending
// the last text to it being on the attached screen), peak-rss-MiB (VmHWM of
// Neovim), and Neovim's CPU time over the window. ACP_BENCH_FLOOR=1
// measures the floor: the chat drawn as plain text (no markdown styling at
// all); ACP_BENCH_RENDER=markdown the chat.render = "markdown" option.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neovim/go-client/nvim"
)

// screen is the text of the attached UI's grid 1 (ext_linegrid), with the
// time a wanted string first showed on it.
type screen struct {
	mu    sync.Mutex
	rows  [][]string
	hls   [][]int          // highlight id of each cell
	names map[int][]string // highlight id -> its groups (hl_attr_define info)
	want  string
	seen  time.Time
	found chan struct{}
}

func newScreen(w, h int) *screen {
	s := &screen{names: map[int][]string{}}
	s.resize(w, h)
	return s
}

func (s *screen) resize(w, h int) {
	s.rows = make([][]string, h)
	s.hls = make([][]int, h)
	for i := range s.rows {
		s.rows[i] = make([]string, w)
		s.hls[i] = make([]int, w)
		for j := range s.rows[i] {
			s.rows[i][j] = " "
		}
	}
}

// groupsAt is the text of screen row row and, where it contains sub, the
// highlight groups of the cell where sub starts (nil when it does not).
func (s *screen) groupsAt(sub string) (row string, groups []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.rows {
		line := strings.Join(r, "")
		k := strings.Index(line, sub)
		if k < 0 {
			continue
		}
		// k is a byte offset; count the cells before it.
		col := 0
		for n := 0; n < k; col++ {
			n += len(r[col])
		}
		return line, append([]string{}, s.names[s.hls[i][col]]...)
	}
	return "", nil
}

// expect arms the screen to note when text shows (see wait).
func (s *screen) expect(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.want, s.seen, s.found = text, time.Time{}, make(chan struct{})
}

// wait returns when the expected text showed, or the zero time on timeout.
func (s *screen) wait(d time.Duration) time.Time {
	s.mu.Lock()
	ch := s.found
	s.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(d):
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// text is the screen as lines.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, r := range s.rows {
		b.WriteString(strings.Join(r, ""))
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *screen) redraw(updates ...[]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range updates {
		if len(u) == 0 {
			continue
		}
		name, _ := u[0].(string)
		for _, a := range u[1:] {
			args, _ := a.([]any)
			switch name {
			case "grid_resize":
				if len(args) >= 3 && toInt(args[0]) == 1 {
					s.resize(toInt(args[1]), toInt(args[2]))
				}
			case "grid_clear":
				if len(args) >= 1 && toInt(args[0]) == 1 && len(s.rows) > 0 {
					s.resize(len(s.rows[0]), len(s.rows))
				}
			case "grid_line":
				s.line(args)
			case "hl_attr_define":
				if len(args) >= 4 {
					info, _ := args[3].([]any)
					var names []string
					for _, x := range info {
						if m, ok := x.(map[string]any); ok {
							if n, ok := m["hi_name"].(string); ok {
								names = append(names, n)
							}
						}
					}
					s.names[toInt(args[0])] = names
				}
			case "grid_scroll":
				s.scroll(args)
			case "flush":
				s.check()
			}
		}
	}
}

func (s *screen) line(args []any) {
	if len(args) < 4 || toInt(args[0]) != 1 {
		return
	}
	row, col := toInt(args[1]), toInt(args[2])
	cells, _ := args[3].([]any)
	if row < 0 || row >= len(s.rows) {
		return
	}
	r, hl := s.rows[row], s.hls[row]
	id := 0
	for _, c := range cells {
		cell, _ := c.([]any)
		if len(cell) == 0 {
			continue
		}
		txt, _ := cell[0].(string)
		if len(cell) >= 2 {
			id = toInt(cell[1])
		}
		rep := 1
		if len(cell) >= 3 {
			rep = toInt(cell[2])
		}
		for i := 0; i < rep && col < len(r); i++ {
			r[col], hl[col] = txt, id
			col++
		}
	}
}

func (s *screen) scroll(args []any) {
	if len(args) < 7 || toInt(args[0]) != 1 {
		return
	}
	top, bot, left, right, n := toInt(args[1]), toInt(args[2]), toInt(args[3]), toInt(args[4]), toInt(args[5])
	if n > 0 {
		for r := top; r < bot-n; r++ {
			copy(s.rows[r][left:right], s.rows[r+n][left:right])
			copy(s.hls[r][left:right], s.hls[r+n][left:right])
		}
	} else if n < 0 {
		for r := bot - 1; r >= top-n; r-- {
			copy(s.rows[r][left:right], s.rows[r+n][left:right])
			copy(s.hls[r][left:right], s.hls[r+n][left:right])
		}
	}
}

func (s *screen) check() {
	if s.want == "" || !s.seen.IsZero() {
		return
	}
	for _, r := range s.rows {
		if strings.Contains(strings.Join(r, ""), s.want) {
			s.seen = time.Now()
			close(s.found)
			return
		}
	}
}

// pinger calls nvim_eval("1") every 5 ms from its own connection and keeps
// the longest round trip while measuring.
type pinger struct {
	nv   *nvim.Nvim
	stop chan struct{}
	done chan struct{}

	mu        sync.Mutex
	measuring bool
	since     time.Time
	max       time.Duration
	blocked   time.Duration // the sum of pings over 50 ms
	window    time.Duration
	inflight  time.Time // when the ping waiting for an answer was sent

	// With pid (Neovim's) set: the most CPU Neovim's main thread ran
	// during one ping (/proc/<pid>/schedstat), a block's own cost whatever
	// the load; and during the longest ping, its CPU and its time waiting
	// for a CPU.
	pid                 int
	maxCPU              time.Duration
	longCPU, longQueued time.Duration
	// Pings over a frame (16 ms), and those in which Neovim itself ran
	// over a frame (with pid set).
	overFrame, cpuOverFrame int
}

// schedstat is the time the task pid (Neovim's main thread) ran on a CPU
// and waited for one, from /proc/<pid>/schedstat (ns precision).
func schedstat(pid int) (run, queued time.Duration) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0
	}
	r, _ := strconv.ParseInt(f[0], 10, 64)
	q, _ := strconv.ParseInt(f[1], 10, 64)
	return time.Duration(r), time.Duration(q)
}

func startPinger(tb testing.TB, addr string) *pinger {
	tb.Helper()
	nv, err := nvim.Dial(addr)
	if err != nil {
		tb.Fatalf("dial %s: %v", addr, err)
	}
	p := &pinger{nv: nv, stop: make(chan struct{}), done: make(chan struct{})}
	go p.loop()
	tb.Cleanup(p.close)
	return p
}

func (p *pinger) loop() {
	defer close(p.done)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		pid := p.pid
		p.mu.Unlock()
		var run0, queued0 time.Duration
		if pid > 0 {
			run0, queued0 = schedstat(pid)
		}
		start := time.Now()
		p.mu.Lock()
		p.inflight = start
		p.mu.Unlock()
		var r int
		err := p.nv.Eval("1", &r)
		d := time.Since(start)
		var run, queued time.Duration
		if pid > 0 {
			run, queued = schedstat(pid)
			run, queued = run-run0, queued-queued0
		}
		p.mu.Lock()
		p.inflight = time.Time{}
		if p.measuring && start.Before(p.since) {
			// Sent before the figures were reset: only the part since
			// counts (a block of what came before is not this window's).
			d, run, queued = time.Since(p.since), 0, 0
		}
		if p.measuring {
			if d > p.max {
				p.longCPU, p.longQueued = run, queued
			}
			p.maxCPU = max(p.maxCPU, run)
			if d > 16*time.Millisecond {
				p.overFrame++
			}
			if run > 16*time.Millisecond {
				p.cpuOverFrame++
			}
			p.note(d)
		}
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// measure starts (true) or stops (false) keeping figures; starting resets them.
func (p *pinger) measure(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.max, p.blocked, p.since = 0, 0, time.Now()
		p.maxCPU, p.longCPU, p.longQueued = 0, 0, 0
		p.overFrame, p.cpuOverFrame = 0, 0
	} else {
		p.window = time.Since(p.since)
		if !p.inflight.IsZero() {
			p.note(time.Since(p.inflight)) // still blocked now
		}
	}
	p.measuring = on
}

func (p *pinger) note(d time.Duration) {
	if d > p.max {
		p.max = d
	}
	if d > 50*time.Millisecond {
		p.blocked += d
	}
}

// figures: the longest ping, and the share of the window spent in pings
// over 50 ms.
func (p *pinger) figures() (max time.Duration, blockedPct float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pct := 0.0
	if p.window > 0 {
		pct = 100 * float64(p.blocked) / float64(p.window)
		if pct > 100 {
			pct = 100
		}
	}
	return p.max, pct
}

// cpuFigures (with pid set): the most CPU Neovim ran during one ping, and
// during the longest ping its CPU and its wait for a CPU (the load).
func (p *pinger) cpuFigures() (maxCPU, longCPU, longQueued time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxCPU, p.longCPU, p.longQueued
}

// overFrames: how many pings took over a frame (16 ms), and in how many
// Neovim itself ran over a frame (with pid set).
func (p *pinger) overFrames() (pings, cpu int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.overFrame, p.cpuOverFrame
}

// watchCPU makes the pinger read Neovim's (pid's) CPU around each ping.
func (p *pinger) watchCPU(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pid = pid
}

func (p *pinger) close() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	// Let the ping in flight come back first (closing under it makes
	// go-client log "no pending call for reply"), unless Neovim is stuck.
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
	}
	p.nv.Close()
	<-p.done
}

// uiEditor is an Editor with a UI attached and a pinging second client.
type uiEditor struct {
	*Editor
	screen *screen
	ping   *pinger
	pid    int
}

func startUIEditor(b testing.TB) *uiEditor {
	b.Helper()
	sock := filepath.Join(b.TempDir(), "nvim.sock")
	e := startEditorArgs(b, "--listen", sock)
	u := attachUI(e, 200, 50)
	u.ping = startPinger(b, sock)
	return u
}

// attachUI attaches a w x h UI to e (ext_linegrid, ext_hlstate: the
// screen knows each cell's highlight groups).
func attachUI(e *Editor, w, h int) *uiEditor {
	e.t.Helper()
	scr := newScreen(w, h)
	if err := e.nv.RegisterHandler("redraw", scr.redraw); err != nil {
		e.t.Fatal(err)
	}
	if err := e.nv.AttachUI(w, h, map[string]any{"ext_linegrid": true, "rgb": true, "ext_hlstate": true}); err != nil {
		e.t.Fatalf("attach UI: %v", err)
	}
	u := &uiEditor{Editor: e, screen: scr}
	e.Lua(`return vim.fn.getpid()`, &u.pid)
	return u
}

// peakRSS is Neovim's VmHWM in MiB.
func (u *uiEditor) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", u.pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			f := strings.Fields(l)
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return -1
}

// cpu is the CPU time Neovim used so far (user + system, from /proc): on a
// busy machine it says what the work cost when wall times are inflated.
func (u *uiEditor) cpu() time.Duration { return procCPU(u.pid) }

// markTime is when the fake agent logged mark name.
func (u *uiEditor) markTime(name string) time.Time {
	for _, ev := range u.AgentEvents() {
		if ev["event"] == "mark" && ev["name"] == name {
			if ns, ok := ev["ns"].(float64); ok {
				return time.Unix(0, int64(ns))
			}
		}
	}
	return time.Time{}
}

// burstCycle is markdown as agents write it, cut into ~40-byte chunks that
// do not end on line boundaries: headings, emphasis, inline code, links,
// lists and a fenced Lua block (a parser every Debian Neovim ships).
var burstCycle = []string{
	"## Step {i}: what the agent found\n\nThe ",
	"function `load_config` reads **every** ",
	"file under `~/.config` and *then* merges ",
	"them; see [the docs](https://example.com/",
	"docs/{i}) for details.\n\n- first item with ",
	"`code`\n- second item, **bold** text\n- thi",
	"rd item\n\n```lua\nlocal function f{i}(x)\n",
	"  if x > 1 then return x * 2 end\n",
	"  return \"value\" .. tostring(x)\nend\n```\n\n",
}

// prefillTurn streams about lines lines of the same markdown in big chunks.
func prefillTurn(lines int) []any {
	one := strings.Join(burstCycle, "")
	per := strings.Count(one, "\n")
	chunk := strings.Repeat(one, 100/per+1)
	n := lines/strings.Count(chunk, "\n") + 1
	return []any{M{"chunks": n, "cycle": []string{chunk}}}
}

type uiFigures struct {
	maxBlock, marker time.Duration
	blockedPct       float64
	rss              float64
	cpu              time.Duration // Neovim's CPU time over the window
}

// worst keeps the worst of each figure over iterations and reports them.
type worst struct {
	f    uiFigures
	done string // what the marker time measures, when not a marker
}

func (w *worst) add(b *testing.B, f uiFigures) {
	b.Logf("max block %v (%.0f%% of the window blocked > 50 ms), %s %v, peak RSS %.0f MiB, Neovim CPU %v, load %s",
		f.maxBlock.Round(time.Millisecond), f.blockedPct, w.doneName(), f.marker.Round(time.Millisecond), f.rss, f.cpu, loadavg())
	if f.maxBlock > w.f.maxBlock {
		w.f.maxBlock = f.maxBlock
	}
	if f.marker > w.f.marker {
		w.f.marker = f.marker
	}
	if f.rss > w.f.rss {
		w.f.rss = f.rss
	}
	if f.blockedPct > w.f.blockedPct {
		w.f.blockedPct = f.blockedPct
	}
	if f.cpu > w.f.cpu {
		w.f.cpu = f.cpu
	}
}

func (w *worst) doneName() string {
	if w.done != "" {
		return w.done
	}
	return "marker on screen after"
}

func (w *worst) report(b *testing.B) {
	b.ReportMetric(float64(w.f.maxBlock.Microseconds())/1000, "max-block-ms")
	unit := "marker-ms"
	if w.done != "" {
		unit = "done-ms"
	}
	b.ReportMetric(float64(w.f.marker.Microseconds())/1000, unit)
	b.ReportMetric(w.f.rss, "peak-rss-MiB")
	b.ReportMetric(w.f.blockedPct, "%blocked")
	b.ReportMetric(float64(w.f.cpu.Milliseconds()), "nvim-cpu-ms")
}

// benchOptions: setup options of the benchmarks; ACP_BENCH_RENDER sets
// chat.render (e.g. "markdown", to measure what that option costs).
func benchOptions() map[string]any {
	if r := os.Getenv("ACP_BENCH_RENDER"); r != "" {
		return map[string]any{"chat": map[string]any{"render": r}}
	}
	return nil
}

// floorSetup is the setup for ACP_BENCH_FLOOR=1: no markdown styling.
func floorSetup(b *testing.B, u *uiEditor) {
	if os.Getenv("ACP_BENCH_FLOOR") == "" {
		return
	}
	b.Log("floor: the chat is plain text")
	// (the plugin's own markdown drawing, where it exists, stops too)
	u.Lua(`local s = require("acp").status(); vim.bo[s.chat_buf].filetype = "text"
		local ok, view = pcall(require, "acp.render.view")
		if ok then view.detach(s.chat_buf) end`, nil)
}

// runMarked sends prompt and waits for marker on the attached screen;
// the pinger measures from the send to the marker showing.
func (u *uiEditor) runMarked(b *testing.B, prompt, marker string) uiFigures {
	b.Helper()
	u.screen.expect(marker)
	cpu0 := u.cpu()
	u.ping.measure(true)
	b.StartTimer()
	u.Send(prompt)
	seen := u.screen.wait(180 * time.Second)
	b.StopTimer()
	u.ping.measure(false)
	cpu := u.cpu() - cpu0
	if seen.IsZero() {
		b.Fatalf("%q never showed on the screen:\n%s", marker, u.screen.text())
	}
	sent := u.markTime(marker)
	if sent.IsZero() {
		b.Fatalf("the agent logged no mark %q", marker)
	}
	u.WaitState("ready")
	max, pct := u.ping.figures()
	return uiFigures{maxBlock: max, blockedPct: pct, marker: seen.Sub(sent), rss: u.peakRSS(), cpu: cpu}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func marked(marker string) []any {
	return []any{M{"mark": marker}, text("\n" + marker + "\n")}
}

// BenchmarkUIStream: 20,000 chunks of markdown as fast as the agent can
// send them, then a marker; on an empty chat and on one already holding
// 100,000 lines.
func BenchmarkUIStream(b *testing.B) {
	for _, c := range []struct {
		name    string
		cycle   []string
		prefill int
	}{
		{"empty", burstCycle, 0},
		{"100k-lines", burstCycle, 100000},
		// The shape: one ~40-byte line per chunk, no markup.
		{"plain-lines", []string{"line {i} of the answer, words to fill it\n"}, 0},
	} {
		b.Run(c.name, func(b *testing.B) {
			var w worst
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				u := startUIEditor(b)
				burst := append([]any{M{"chunks": 20000, "cycle": c.cycle}}, marked("BURST-DONE")...)
				turns := []any{burst}
				if c.prefill > 0 {
					turns = []any{append(prefillTurn(c.prefill), marked("PREFILL-DONE")...), burst}
				}
				u.SetupFake(M{"turns": turns}, benchOptions())
				u.Chat("fake")
				u.WaitState("ready")
				floorSetup(b, u)
				if c.prefill > 0 {
					u.runMarked(b, "prefill", "PREFILL-DONE")
					var n int
					u.Lua(`return vim.api.nvim_buf_line_count(require("acp").status().chat_buf)`, &n)
					if n < c.prefill {
						b.Fatalf("prefill left %d lines, want %d", n, c.prefill)
					}
				}
				w.add(b, u.runMarked(b, "burst", "BURST-DONE"))
			}
			w.report(b)
		})
	}
}

// BenchmarkUIHostileUpdates: the hostile session updates of issue 31
// (hostileUpdates: escapes, megabyte titles and lines, a thousand
// switches, malformed fields) in one turn, once and ten times over, then
// a marker; max block is the longest Neovim went without answering.
func BenchmarkUIHostileUpdates(b *testing.B) {
	for _, c := range []struct {
		name  string
		times int
	}{{"once", 1}, {"tenfold", 10}} {
		b.Run(c.name, func(b *testing.B) {
			var w worst
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				u := startUIEditor(b)
				var steps []any
				for range c.times {
					steps = append(steps, hostileUpdates()...)
				}
				u.SetupFake(hostileScenario(append(steps, marked("HOSTILE-DONE")...)), benchOptions())
				u.Chat("fake")
				u.WaitState("ready")
				floorSetup(b, u)
				w.add(b, u.runMarked(b, "go", "HOSTILE-DONE"))
			}
			w.report(b)
		})
	}
}

// BenchmarkUIToolCalls: 4,000 tool calls, then a status update of each.
func BenchmarkUIToolCalls(b *testing.B) {
	var w worst
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		u := startUIEditor(b)
		u.SetupFake(M{"turns": []any{append([]any{M{"tools": 4000, "prefix": "tc-"}}, marked("TOOLS-DONE")...)}}, benchOptions())
		u.Chat("fake")
		u.WaitState("ready")
		floorSetup(b, u)
		w.add(b, u.runMarked(b, "tools", "TOOLS-DONE"))
		if txt := u.ChatText(); !strings.Contains(txt, "Run check 3999  (execute, completed)") {
			b.Fatalf("last tool call not completed in the chat")
		}
	}
	w.report(b)
}

// BenchmarkUICancelPermissions: 1,000 permission requests wait, then the
// user cancels the turn: each is answered cancelled and its block marked.
func BenchmarkUICancelPermissions(b *testing.B) {
	const n = 1000
	w := worst{done: "all answered and marked after"}
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		u := startUIEditor(b)
		steps := make([]any, 0, n+1)
		for j := 0; j < n; j++ {
			r := permRequest(fmt.Sprintf("p-%d", j), fmt.Sprintf("Run step %d", j), "execute", fmt.Sprintf("echo %d", j))
			r["async"] = true
			steps = append(steps, r)
		}
		steps = append(steps, M{"wait_cancel": true})
		u.SetupFake(M{"turns": []any{steps}}, benchOptions())
		u.Chat("fake")
		u.WaitState("ready")
		floorSetup(b, u)
		u.Send("ask a lot")
		u.Eventually("all requests waiting", 120*time.Second, func() bool {
			var c int
			u.Lua(`local s = require("acp")._session(); return s and s.prompts:count("permission") or 0`, &c)
			return c == n
		})
		cpu0 := u.cpu()
		u.ping.measure(true)
		b.StartTimer()
		start := time.Now()
		u.Lua(`require("acp").cancel()`, nil)
		// Done: the turn ended and every block shows it was cancelled.
		u.Eventually("every block marked cancelled", 120*time.Second, func() bool {
			var marked int
			u.Lua(`local n = 0
				for _, l in ipairs(vim.api.nvim_buf_get_lines(require("acp").status().chat_buf, 0, -1, false)) do
					if l:find("^%S+ Run step %d+  %(execute, cancelled%)$") then n = n + 1 end
				end
				return n`, &marked)
			return marked == n && u.Status().State == "ready"
		})
		b.StopTimer()
		took := time.Since(start)
		u.ping.measure(false)
		cpu := u.cpu() - cpu0
		max, pct := u.ping.figures()
		u.Eventually("every request answered", 30*time.Second, func() bool { return len(outcomes(u.Editor)) == n })
		w.add(b, uiFigures{maxBlock: max, blockedPct: pct, marker: took, rss: u.peakRSS(), cpu: cpu})
	}
	w.report(b)
}

// opsLua times, inside Neovim and with the UI redrawn each time, what a
// user does with the chat: page up through it, type in the input area,
// hide and open it. Each figure is the slowest of its repeats, in ms.
const opsLua = `
local s = require("acp")._session()
local function ms(f)
  local t = vim.uv.hrtime()
  f()
  vim.cmd("redraw")
  return (vim.uv.hrtime() - t) / 1e6
end
local out = { scroll = 0, type = 0, open = 0 }
vim.api.nvim_set_current_win(s.chat_win)
vim.cmd("normal! G")
vim.cmd("redraw")
for _ = 1, 20 do
  out.scroll = math.max(out.scroll, ms(function() vim.cmd("normal! \2") end))
end
vim.api.nvim_set_current_win(s.input_win)
for _, c in ipairs(vim.split("hello there", "")) do
  out.type = math.max(out.type, ms(function() vim.api.nvim_feedkeys("A" .. c .. "\27", "xt", false) end))
end
for _ = 1, 5 do
  require("acp.chat").hide(s)
  vim.cmd("redraw")
  out.open = math.max(out.open, ms(function() require("acp").chat() end))
end
return out`

// BenchmarkUIChatOps: a transcript of 100,000 lines costs what an empty
// one does: a chunk shown (agent to screen), a page scrolled, a key typed
// in the input area, the chat opened.
func BenchmarkUIChatOps(b *testing.B) {
	for _, c := range []struct {
		name    string
		prefill int
	}{{"empty", 0}, {"100k-lines", 100000}} {
		b.Run(c.name, func(b *testing.B) {
			var chunk, scroll, typing, open float64
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				u := startUIEditor(b)
				turns := []any{marked("ONE-CHUNK")}
				if c.prefill > 0 {
					turns = []any{append(prefillTurn(c.prefill), marked("PREFILL-DONE")...), marked("ONE-CHUNK")}
				}
				u.SetupFake(M{"turns": turns}, benchOptions())
				u.Chat("fake")
				u.WaitState("ready")
				if c.prefill > 0 {
					u.runMarked(b, "prefill", "PREFILL-DONE")
				}
				f := u.runMarked(b, "one", "ONE-CHUNK")
				var ops map[string]float64
				u.Lua(opsLua, &ops)
				b.Logf("chunk on screen %v, page up %.1f ms, key typed %.1f ms, chat opened %.1f ms (slowest), load %s",
					f.marker.Round(time.Millisecond), ops["scroll"], ops["type"], ops["open"], loadavg())
				chunk = math.Max(chunk, float64(f.marker.Microseconds())/1000)
				scroll, typing, open = math.Max(scroll, ops["scroll"]), math.Max(typing, ops["type"]), math.Max(open, ops["open"])
			}
			b.ReportMetric(chunk, "chunk-ms")
			b.ReportMetric(scroll, "scroll-ms")
			b.ReportMetric(typing, "type-ms")
			b.ReportMetric(open, "open-ms")
		})
	}
}

// BenchmarkUISubagents: 20,000 chunks of one-line text, from the agent
// itself ("none") or from 5 subagents under one Task tool call, streaming
// by turns of 80 chunks each ("5-subagents"), then a marker. The issue's
// bound: the second's max block within 1.2x of the first's.
func BenchmarkUISubagents(b *testing.B) {
	line := []string{"line {i} of the answer, words to fill it\n"}
	for _, c := range []struct {
		name string
		subs int
	}{{"none", 0}, {"5-subagents", 5}} {
		b.Run(c.name, func(b *testing.B) {
			var w worst
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				u := startUIEditor(b)
				turn := []any{update(M{"sessionUpdate": "tool_call", "toolCallId": "task", "title": "Task: helpers",
					"kind": "other", "status": "in_progress"})}
				if c.subs == 0 {
					turn = append(turn, M{"chunks": 20000, "cycle": line})
				} else {
					for k := 0; k < c.subs; k++ {
						turn = append(turn, update(M{"sessionUpdate": "subagent_update", "sessionId": fmt.Sprintf("sub-%d", k),
							"title": fmt.Sprintf("Helper %d", k), "state": M{"state": "running"}, "_meta": M{"toolCallId": "task"}}))
					}
					for r := 0; r < 20000/(80*c.subs); r++ {
						for k := 0; k < c.subs; k++ {
							turn = append(turn, onChild(fmt.Sprintf("sub-%d", k), M{"chunks": 80, "cycle": line}))
						}
					}
				}
				turn = append(turn, marked("SUBS-DONE")...)
				u.SetupFake(M{"turns": []any{turn}}, benchOptions())
				u.Chat("fake")
				u.WaitState("ready")
				floorSetup(b, u)
				w.add(b, u.runMarked(b, "go", "SUBS-DONE"))
			}
			w.report(b)
		})
	}
}
