// Package terminal runs agent commands in real pseudo-terminals for the ACP
// terminal/* client methods (create, output, wait_for_exit, kill, release).
//
// Each terminal is a process started on its own PTY as the leader of a new
// session and process group. Its output is captured twice: as plain text
// for the agent (escape sequences stripped, bounded, oldest bytes dropped)
// and as a bounded tail of raw bytes that a live view follows by offset
// (RawSince, woken by CreateOptions.OnActivity). The package knows nothing
// of Neovim; it is Unix-only.
package terminal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
	"github.com/nvim-acp/nvim-acp/sandbox"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultOutputByteLimit = 1 << 20
	DefaultMaxTerminals    = 16
	DefaultKillGrace       = 2 * time.Second
	DefaultStopTimeout     = 10 * time.Second
	DefaultRows            = 24
	DefaultCols            = 120
	DefaultRawTail         = 256 << 10
	// MaxOutputByteLimit caps a per-terminal OutputByteLimit request.
	MaxOutputByteLimit = 16 << 20
	// DefaultOutputBudget is the text all of a manager's terminals keep together.
	DefaultOutputBudget = 32 << 20
	// MinOutputByteLimit is what a terminal keeps once the budget is spent.
	MinOutputByteLimit = 64 << 10
)

// drainTimeout bounds how long output is still read after the command
// exited while something else (an escaped background process) keeps the
// PTY open.
var drainTimeout = time.Second

var (
	// ErrUnknownTerminal is returned for an id that was never created or was released.
	ErrUnknownTerminal = errors.New("unknown terminal")
	// ErrTooManyTerminals is returned by Create when MaxTerminals live terminals exist.
	ErrTooManyTerminals = errors.New("too many terminals")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("terminal manager closed")
	// ErrExited is returned by Write once the command has exited.
	ErrExited = errors.New("terminal command has exited")
)

// Options configures a Manager; zero fields take the defaults above.
type Options struct {
	Cwd             string        // default working directory (default: the process's)
	Env             []string      // base environment (default: os.Environ())
	OutputByteLimit int           // default text limit per terminal in bytes
	OutputBudget    int           // text limit of all terminals together (see Create)
	MaxTerminals    int           // live (not released) terminals allowed at once
	KillGrace       time.Duration // SIGTERM to SIGKILL delay for Kill, Release, Close
	Rows, Cols      uint16        // initial window size
	RawTail         int           // raw bytes kept for RawSince; negative disables
	Logger          *slog.Logger  // debug logging (default: discarded)
	// Tag, when set, is the prefix of the proctree owner tag given to each
	// command (Tag + its id): kill, release and close then also reach the
	// processes that left the command's process group or session.
	Tag string
	// StopTimeout bounds each call of a CreateOptions.Stop hook.
	StopTimeout time.Duration
	// Warn, when set, gets what the user should know: a Stop hook that
	// failed (the command may still run where it ran).
	Warn func(msg string)
}

// CreateOptions describes one command to start.
type CreateOptions struct {
	Command         string            // program, or a whole shell line when Args is empty
	Args            []string          // arguments; none means Command may be a shell line
	Cwd             string            // working directory (default: Options.Cwd)
	WorkDir         *WorkDir          // when set, the working directory (Cwd is ignored); the caller closes it after Create
	Env             map[string]string // variables set over the base environment
	OutputByteLimit int               // text limit in bytes (default: Options.OutputByteLimit)
	Rows, Cols      uint16            // window size (default: Options.Rows/Cols)
	OnActivity      func()            // called after each PTY read is captured (see RawSince), on the reader goroutine: must not block
	OnExit          func(ExitStatus)  // called once after exit and drain; neither callback runs after Release/Close
	// Sandbox, when set, confines the command (bubblewrap): what it
	// denied is in ExitStatus.Blocked and at the end of the output.
	Sandbox *sandbox.Policy
	// Stop, when set, ends what the command runs out of this machine's
	// reach (on the far side of a prefix); it is called in the background,
	// bounded by Options.StopTimeout, whenever the terminal is killed,
	// released or closed, besides the local kill; running says the command
	// here had not exited yet. It returns what the far side reported
	// (logged, with the outcome), and whether it found the command's
	// processes there and ended them all, so that a later kill, release or
	// close has nothing to stop.
	Stop func(ctx context.Context, running bool) (report string, ended bool, err error)
}

// ExitStatus is how a command ended: an exit code or a signal name.
type ExitStatus struct {
	ExitCode *int   // set when the command exited normally
	Signal   string // e.g. "SIGKILL" when it was killed by a signal
	// Blocked says what the sandbox denied the command, as its output
	// shows it ("blocked by the sandbox: write to ~/.bashrc (...)").
	Blocked []string
}

// String formats the status as "exit 3" or "signal SIGKILL".
func (s ExitStatus) String() string {
	if s.ExitCode != nil {
		return "exit " + strconv.Itoa(*s.ExitCode)
	}
	return "signal " + s.Signal
}

// Output is a snapshot of a terminal's text output.
type Output struct {
	Text      string      // plain text, valid UTF-8, at most the byte limit
	Truncated bool        // older output was dropped
	Exit      *ExitStatus // non-nil once the command has exited
}

// Manager owns the terminals of one ACP session; its methods are safe for
// concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	terms    map[string]*term
	starting int // Create calls past the cap check, not yet registered
	reserved int // text limits granted to those calls (see grantLocked)
	closed   bool
	quit     chan struct{} // closed by Close
	seq      uint64
	wg       sync.WaitGroup // reader, waiter and kill-escalation goroutines
}

// term is one terminal. Fields above mu are immutable after Create.
type term struct {
	id       string
	seq      uint64 // creation order
	tag      string // proctree owner tag ("" without Options.Tag)
	cmd      *exec.Cmd
	pid      int
	pty      *os.File
	run      *sandbox.Run // the sandbox it runs in (nil: none)
	onActive func()
	onExit   func(ExitStatus)
	stop     func(context.Context, bool) (string, bool, error)

	readerDone chan struct{} // closed when the reader goroutine returns
	done       chan struct{} // closed once exit is set (after Wait and drain)

	mu       sync.Mutex
	text     *textCapture
	raw      tailBuffer
	reaped   bool // cmd.Wait returned: the pid must not be signalled any more
	exit     *ExitStatus
	released bool // released or manager closed: no more callbacks
	killing  bool // a SIGKILL escalation is scheduled
	started  bool // the sandboxed command itself runs (not only bwrap), see commandStarted
	deferred bool // a kill waits for the sandboxed command to start
	stopping bool // the Stop hook runs
	stopped  bool // Stop succeeded after the command here exited, or ended it there: nothing is left to stop
	warned   bool // a failed Stop was given to Options.Warn
}

// NewManager returns a Manager with opts, zero fields defaulted.
func NewManager(opts Options) *Manager {
	if opts.OutputByteLimit <= 0 {
		opts.OutputByteLimit = DefaultOutputByteLimit
	}
	if opts.MaxTerminals <= 0 {
		opts.MaxTerminals = DefaultMaxTerminals
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	if opts.Rows == 0 {
		opts.Rows = DefaultRows
	}
	if opts.Cols == 0 {
		opts.Cols = DefaultCols
	}
	if opts.RawTail == 0 {
		opts.RawTail = DefaultRawTail
	}
	if opts.OutputBudget <= 0 {
		opts.OutputBudget = DefaultOutputBudget
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Manager{opts: opts, log: log, terms: make(map[string]*term), quit: make(chan struct{})}
}

// Create starts a command on a new PTY and returns its terminal id at once.
// ctx only bounds the start; the command outlives it. A command that
// cannot be started is an error and leaves no terminal behind.
func (m *Manager) Create(ctx context.Context, o CreateOptions) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return "", ErrClosed
	}
	if len(m.terms)+m.starting >= m.opts.MaxTerminals {
		n := len(m.terms) + m.starting
		m.mu.Unlock()
		return "", fmt.Errorf("%w: %d live terminals (release some first)", ErrTooManyTerminals, n)
	}
	m.starting++
	m.seq++
	seq := m.seq
	id := "term-" + strconv.FormatUint(seq, 10)
	limit := m.grantLocked(m.requestedLimit(o))
	m.reserved += limit
	m.mu.Unlock()

	t, err := m.start(id, o, limit)

	m.mu.Lock()
	m.starting--
	m.reserved -= limit
	if err != nil {
		m.mu.Unlock()
		return "", fmt.Errorf("terminal create %q: %w", o.Command, err)
	}
	if m.closed {
		m.mu.Unlock()
		_ = syscall.Kill(-t.pid, syscall.SIGKILL)
		_ = t.cmd.Wait()
		proctree.Exited(t.pid)
		if t.tag != "" {
			proctree.Kill(0, t.tag)
		}
		_ = t.pty.Close()
		if t.stop != nil {
			m.runStop(t, "closed while it started", t.exited())
		}
		return "", ErrClosed
	}
	t.seq = seq
	m.terms[id] = t
	m.wg.Add(2)
	m.mu.Unlock()
	if t.tag != "" {
		proctree.Own(t.tag)
	}

	go m.read(t)
	go m.wait(t)
	m.log.Debug("terminal created", "id", id, "pid", t.pid, "argv", t.cmd.Args, "cwd", t.cmd.Dir)
	return id, nil
}

// requestedLimit is the text limit o asks for: its own, else the
// manager's default, at most MaxOutputByteLimit.
func (m *Manager) requestedLimit(o CreateOptions) int {
	limit := o.OutputByteLimit
	if limit <= 0 {
		limit = m.opts.OutputByteLimit
	}
	return min(limit, MaxOutputByteLimit)
}

// grantLocked returns the text limit a new terminal asking for want gets
// within Options.OutputBudget, shared by every terminal of m: what the
// others (and the Create calls under way) have not taken, where the
// oldest finished terminals give way first (their text is cut to its last
// MinOutputByteLimit bytes, and says it was truncated); at least
// MinOutputByteLimit once the budget is spent (at most want). So the
// terminals keep at most the budget plus MinOutputByteLimit each, however
// many agents ask for the cap. m.mu is held.
func (m *Manager) grantLocked(want int) int {
	used := m.reserved
	var finished []*term
	for _, t := range m.terms {
		t.mu.Lock()
		used += t.text.tail.limit
		if t.exit != nil && t.text.tail.limit > MinOutputByteLimit {
			finished = append(finished, t)
		}
		t.mu.Unlock()
	}
	slices.SortFunc(finished, func(a, b *term) int { return cmp.Compare(a.seq, b.seq) })
	for _, t := range finished {
		if used+want <= m.opts.OutputBudget {
			break
		}
		t.mu.Lock()
		freed := t.text.tail.shrink(MinOutputByteLimit)
		t.mu.Unlock()
		used -= freed
		m.log.Debug("terminal output cut to its tail for a new terminal", "id", t.id, "freed", freed)
	}
	return min(want, max(m.opts.OutputBudget-used, MinOutputByteLimit))
}

// start resolves and starts the process; its text keeps limit bytes.
func (m *Manager) start(id string, o CreateOptions, limit int) (*term, error) {
	cwd := o.Cwd
	if cwd == "" {
		cwd = m.opts.Cwd
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cwd = wd
	}
	pwd := cwd
	if o.WorkDir != nil {
		// The opened directory itself, by a name only it has: what was
		// checked is where the command runs.
		cwd, pwd = o.WorkDir.dirRef(), o.WorkDir.Path()
		defer runtime.KeepAlive(o.WorkDir)
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("cwd %s: not a directory", cwd)
	}
	base := m.opts.Env
	if base == nil {
		base = os.Environ()
	}
	tag := ""
	if m.opts.Tag != "" {
		tag = m.opts.Tag + id
	}
	overrides := make(map[string]string, len(o.Env)+2)
	overrides["PWD"] = pwd // where it runs, not Neovim's cwd (the agent's env may say otherwise)
	for k, v := range o.Env {
		overrides[k] = v
	}
	if tag != "" {
		overrides[proctree.EnvKey] = tag
	}
	env := buildEnv(base, overrides)
	path, argv, err := resolveArgv(o.Command, o.Args, env, cwd)
	if err != nil {
		return nil, err
	}
	if rel, ok := strings.CutPrefix(path, cwd+"/"); ok && o.WorkDir != nil {
		// A program in the directory is run by a name relative to it:
		// /proc/self/fd/N closes at exec, and a script's interpreter
		// could not open it by that name.
		path = "./" + rel
	}
	rows, cols := o.Rows, o.Cols
	if rows == 0 {
		rows = m.opts.Rows
	}
	if cols == 0 {
		cols = m.opts.Cols
	}
	var run *sandbox.Run
	if o.Sandbox != nil {
		run, err = o.Sandbox.Prepare(sandbox.Command{Path: path, Args: argv, Env: env, Dir: cwd})
		if err != nil {
			return nil, err
		}
		path, argv, env = run.Path, run.Args, run.Env
	}
	cmd := &exec.Cmd{Path: path, Args: argv, Env: env, Dir: cwd}
	master, err := startPTY(cmd, rows, cols)
	if err != nil {
		return nil, err
	}
	return &term{
		id:         id,
		tag:        tag,
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		pty:        master,
		run:        run,
		onActive:   o.OnActivity,
		onExit:     o.OnExit,
		stop:       o.Stop,
		readerDone: make(chan struct{}),
		done:       make(chan struct{}),
		text:       newTextCapture(limit),
		raw:        newTailBuffer(m.opts.RawTail),
	}, nil
}

// read copies PTY output into the captures until EOF (EIO on Linux once
// the slave side is closed), a read deadline, or Close.
func (m *Manager) read(t *term) {
	defer m.wg.Done()
	defer close(t.readerDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := t.pty.Read(buf)
		if n > 0 {
			t.mu.Lock()
			_, _ = t.text.Write(buf[:n])
			t.raw.write(buf[:n])
			active := t.onActive
			if t.released {
				active = nil
			}
			t.mu.Unlock()
			if active != nil {
				active()
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EIO) &&
				!errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, os.ErrClosed) {
				m.log.Debug("terminal read", "id", t.id, "err", err)
			}
			return
		}
	}
}

// wait reaps the process, lets the reader drain, then publishes the exit.
func (m *Manager) wait(t *term) {
	defer m.wg.Done()
	_ = t.cmd.Wait() // the status is in ProcessState
	t.mu.Lock()
	t.reaped = true
	t.mu.Unlock()
	proctree.Exited(t.pid)
	st := exitStatusOf(t.cmd.ProcessState)
	if t.run != nil && st.ExitCode != nil {
		// bwrap reports a command killed by signal n as exit 128+n.
		if sig, ok := sandbox.ExitSignal(*st.ExitCode); ok {
			st = ExitStatus{Signal: signalName(sig)}
		}
	}

	timer := time.NewTimer(drainTimeout)
	select {
	case <-t.readerDone:
	case <-timer.C:
		// Someone else holds the PTY open: stop reading.
		_ = t.pty.SetReadDeadline(time.Now())
		<-t.readerDone
	}
	timer.Stop()
	_ = t.pty.Close()

	t.mu.Lock()
	if t.run != nil {
		st.Blocked = t.blockedLocked()
	}
	t.exit = &st
	cb := t.onExit
	if t.released {
		cb = nil
	}
	t.mu.Unlock()
	close(t.done)
	m.log.Debug("terminal exited", "id", t.id, "status", st.String())
	if cb != nil {
		cb(st)
	}
}

// blockedLocked says what the sandbox denied the command, and adds it to
// the text the agent reads.
func (t *term) blockedLocked() []string {
	text, _ := t.text.text(false)
	notes := append(t.run.Explain(text), t.run.Tampered()...)
	if len(notes) == 0 {
		return nil
	}
	var b strings.Builder
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	for _, n := range notes {
		b.WriteString("[nvim-acp] " + n + "\n")
	}
	_, _ = t.text.Write([]byte(b.String()))
	return notes
}

// signal sends sig to the terminal's process group unless the leader has
// been reaped (its pid may then be reused), and to every process carrying
// the terminal's tag and their descendants (those that left the group:
// setsid, daemons). It reports whether there was anything to signal.
func (t *term) signal(sig syscall.Signal) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	pgid := t.pid
	if t.reaped {
		pgid = 0
	}
	if t.tag == "" {
		return pgid > 0 && syscall.Kill(-pgid, sig) == nil
	}
	n := proctree.Signal(pgid, t.tag, sig)
	return n > 0 || (pgid > 0 && syscall.Kill(-pgid, 0) == nil)
}

// killAll sends SIGKILL to the terminal's processes, the escaped ones
// included, until none is left.
func (t *term) killAll() {
	t.mu.Lock()
	pgid := t.pid
	if t.reaped {
		pgid = 0
	}
	t.mu.Unlock()
	if t.tag == "" {
		if pgid > 0 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		return
	}
	proctree.Kill(pgid, t.tag)
}

// lookup returns the terminal with id.
func (m *Manager) lookup(id string) (*term, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[id]
	if !ok {
		return nil, fmt.Errorf("terminal %s: %w", id, ErrUnknownTerminal)
	}
	return t, nil
}

// Output returns the text so far, whether it was truncated, and the exit
// status once the command has exited (all output is in Text by then).
func (m *Manager) Output(id string) (Output, error) {
	t, err := m.lookup(id)
	if err != nil {
		return Output{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	text, truncated := t.text.text(t.exit == nil)
	out := Output{Text: text, Truncated: truncated}
	if t.exit != nil {
		st := *t.exit
		out.Exit = &st
	}
	return out, nil
}

// WaitForExit blocks until the command exited and its output was drained,
// or ctx is done (the command keeps running then).
func (m *Manager) WaitForExit(ctx context.Context, id string) (ExitStatus, error) {
	t, err := m.lookup(id)
	if err != nil {
		return ExitStatus{}, err
	}
	select {
	case <-t.done:
		t.mu.Lock()
		defer t.mu.Unlock()
		return *t.exit, nil
	case <-ctx.Done():
		return ExitStatus{}, fmt.Errorf("terminal %s: %w", id, ctx.Err())
	}
}

// Kill sends SIGTERM to the command's process group and SIGKILL after
// Options.KillGrace if it is still alive, and runs the terminal's Stop
// hook. It returns without waiting; the output stays readable. Killing an
// exited command signals only what it left (its tag's processes, Stop's).
func (m *Manager) Kill(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[id]
	if !ok {
		return fmt.Errorf("terminal %s: %w", id, ErrUnknownTerminal)
	}
	m.terminateLocked(t, "kill")
	return nil
}

// KillAll kills every running command, as Kill does for one (a cancelled
// turn takes its commands with it); terminals stay readable.
func (m *Manager) KillAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.terms {
		m.terminateLocked(t, "turn cancelled")
	}
}

// terminateLocked signals t and schedules the SIGKILL escalation, and
// runs its Stop hook (why says what asked, for the log); m.mu is held so
// that the WaitGroup is not grown during Close.
func (m *Manager) terminateLocked(t *term, why string) {
	m.stopLocked(t, why)
	if !t.commandStarted() {
		m.deferTerminateLocked(t, why)
		return
	}
	if !t.signal(syscall.SIGTERM) {
		return
	}
	t.signal(syscall.SIGCONT) // a stopped process would not act on SIGTERM
	t.mu.Lock()
	already := t.killing
	t.killing = true
	t.mu.Unlock()
	if already {
		return
	}
	m.log.Debug("terminal kill", "id", t.id, "pid", t.pid)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		timer := time.NewTimer(m.opts.KillGrace)
		defer timer.Stop()
		// Close ends the grace period: what is left goes at once. Close
		// kills only the terminals it still holds, and a released one
		// is no longer among them, so the kill is done here too.
		select {
		case <-t.done:
			if t.tag == "" {
				return
			}
			// The command is gone; what it left outside its group gets
			// the rest of the grace period.
			select {
			case <-timer.C:
			case <-m.quit:
			}
		case <-timer.C:
		case <-m.quit:
		}
		if t.signal(syscall.SIGKILL) {
			m.log.Debug("terminal kill escalated", "id", t.id, "pid", t.pid)
			t.killAll()
		}
	}()
}

// stopLocked runs t's Stop hook in the background unless it runs
// already, or once succeeded after the command here had exited, or found
// the command's processes on the far side and ended them all (nothing of
// it was left then, nothing can have started since); m.mu is held (see
// terminateLocked) or Close is under way. why (kill, release, session
// stop, ...) is logged with what was done.
func (m *Manager) stopLocked(t *term, why string) {
	if t.stop == nil {
		return
	}
	t.mu.Lock()
	skip := ""
	switch {
	case t.stopping:
		skip = "stopping already"
	case t.stopped:
		skip = "stopped already"
	default:
		t.stopping = true
	}
	t.mu.Unlock()
	if skip != "" {
		m.log.Info("terminal far stop skipped", "id", t.id, "why", why, "skip", skip)
		return
	}
	exited := t.exited() // as asked: the goroutine may start after the kill took effect
	m.log.Info("terminal far stop asked", "id", t.id, "why", why, "running", !exited)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.runStop(t, why, exited)
	}()
}

// exited reports whether t's command here has exited.
func (t *term) exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// runStop calls t's Stop hook, bounded by Options.StopTimeout, for a
// command that had exited here when the stop was asked, or not; what the
// far side reported is logged, a failure as a warning, the first given to
// Options.Warn.
func (m *Manager) runStop(t *term, why string, exited bool) {
	ctx, cancel := context.WithTimeoutCause(context.Background(), m.opts.StopTimeout,
		fmt.Errorf("no answer within %v", m.opts.StopTimeout))
	start := time.Now()
	report, ended, err := t.stop(ctx, !exited)
	took := time.Since(start).Round(time.Millisecond)
	cancel()
	t.mu.Lock()
	t.stopping = false
	// Once the far side found the command's processes and ended them
	// all, nothing of it is left to start more: a release after a kill,
	// while the prefix's process here is still going, would find no pid
	// file and take the far side for elsewhere.
	t.stopped = err == nil && (exited || ended)
	warned := t.warned
	t.warned = t.warned || err != nil
	t.mu.Unlock()
	if err == nil {
		m.log.Info("terminal far stop done", "id", t.id, "why", why, "report", report, "took", took)
		return
	}
	m.log.Warn("terminal far stop failed", "id", t.id, "why", why, "report", report, "took", took, "err", err)
	if m.opts.Warn != nil && !warned {
		m.opts.Warn(fmt.Sprintf("terminal %s: could not end its command where it runs (it may still run there): %v", t.id, err))
	}
}

// commandStarted reports whether a sandboxed command runs yet: while bwrap
// sets the sandbox up, only its own processes exist, and they ignore
// SIGTERM (see package sandbox), so a SIGTERM then would be lost. The
// command has started once a process of its group other than the leader
// (bwrap, or env just before it ignores the signals and becomes bwrap) no
// longer ignores SIGTERM: env --default-signal has run. Unsandboxed
// commands always have.
func (t *term) commandStarted() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.run == nil || t.started || t.reaped {
		return true
	}
	for _, pid := range proctree.Find(t.pid, "") {
		if pid == t.pid {
			continue
		}
		if ign, ok := ignoredSignals(pid); ok && ign&(1<<(syscall.SIGTERM-1)) == 0 {
			t.started = true
			return true
		}
	}
	return false
}

// ignoredSignals is the SigIgn mask of /proc/pid/status.
func ignoredSignals(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	_, rest, ok := strings.Cut(string(b), "\nSigIgn:")
	if !ok {
		return 0, false
	}
	line, _, _ := strings.Cut(rest, "\n")
	v, err := strconv.ParseUint(strings.TrimSpace(line), 16, 64)
	return v, err == nil
}

// deferTerminateLocked terminates t once its sandboxed command has
// started (SIGTERM once, then the usual escalation), or kills everything
// if it has not within the grace period.
func (m *Manager) deferTerminateLocked(t *term, why string) {
	t.mu.Lock()
	already := t.deferred
	t.deferred = true
	t.mu.Unlock()
	if already {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		deadline := time.NewTimer(m.opts.KillGrace)
		defer deadline.Stop()
		tick := time.NewTicker(5 * time.Millisecond) // polls bwrap's setup, some milliseconds
		defer tick.Stop()
		for !t.commandStarted() {
			select {
			case <-t.done:
				return
			case <-m.quit:
				// Close kills what it holds; a released terminal is
				// not among them.
				t.killAll()
				return
			case <-deadline.C:
				t.killAll()
				return
			case <-tick.C:
			}
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.closed {
			m.terminateLocked(t, why)
		}
	}()
}

// Release kills the command if it is still running and forgets the
// terminal: afterwards its id is unknown. Callbacks stop at once.
func (m *Manager) Release(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[id]
	if !ok {
		return fmt.Errorf("terminal %s: %w", id, ErrUnknownTerminal)
	}
	delete(m.terms, id)
	t.mu.Lock()
	t.released = true
	t.mu.Unlock()
	m.terminateLocked(t, "release")
	if t.tag != "" {
		proctree.Disown(t.tag) // its orphans go as soon as they are seen
	}
	m.log.Debug("terminal released", "id", id)
	return nil
}

// Write sends p (keystrokes) to the command's terminal input.
func (m *Manager) Write(id string, p []byte) (int, error) {
	t, err := m.lookup(id)
	if err != nil {
		return 0, err
	}
	select {
	case <-t.done:
		return 0, fmt.Errorf("terminal %s: %w", id, ErrExited)
	default:
	}
	n, err := t.pty.Write(p)
	if err != nil {
		if errors.Is(err, os.ErrClosed) {
			err = ErrExited
		}
		return n, fmt.Errorf("terminal %s: %w", id, err)
	}
	return n, nil
}

// Resize sets the terminal window size (the command gets SIGWINCH); it is
// a no-op once the command has exited.
func (m *Manager) Resize(id string, rows, cols uint16) error {
	t, err := m.lookup(id)
	if err != nil {
		return err
	}
	if rows == 0 || cols == 0 {
		return fmt.Errorf("terminal %s: invalid size %dx%d", id, rows, cols)
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	if err := setWinsize(t.pty, rows, cols); err != nil {
		if errors.Is(err, os.ErrClosed) {
			return nil
		}
		return fmt.Errorf("terminal %s: resize: %w", id, err)
	}
	return nil
}

// Close kills every terminal's process group (SIGTERM, then SIGKILL after
// KillGrace) and runs its Stop hook, waits for them and all goroutines,
// and makes further calls fail. It is idempotent.
func (m *Manager) Close() error {
	return m.CloseFor("closed")
}

// CloseFor is Close, why (session stop, Neovim quit) saying for the log
// what closed the terminals.
func (m *Manager) CloseFor(why string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.wg.Wait()
		return nil
	}
	m.closed = true
	close(m.quit)
	terms := make([]*term, 0, len(m.terms))
	for id, t := range m.terms {
		terms = append(terms, t)
		delete(m.terms, id)
	}
	m.mu.Unlock()

	for _, t := range terms {
		t.mu.Lock()
		t.released = true
		t.mu.Unlock()
		m.stopLocked(t, why)
		if t.signal(syscall.SIGTERM) {
			t.signal(syscall.SIGCONT)
		}
	}
	timer := time.NewTimer(m.opts.KillGrace)
	defer timer.Stop()
	for _, t := range terms {
		select {
		case <-t.done:
			continue
		case <-timer.C:
		}
		break
	}
	// Whatever is left, in the groups or escaped from them, goes now.
	for _, t := range terms {
		t.killAll()
		if t.tag != "" {
			proctree.Disown(t.tag)
		}
	}
	m.wg.Wait()
	m.log.Debug("terminal manager closed", "terminals", len(terms))
	return nil
}
