package transport

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/nvim-acp/nvim-acp/proctree"
)

// Command says how to start an agent process.
type Command struct {
	Name string   // the agent's name, for messages
	Argv []string // program and arguments
	Env  []string // its whole environment
	Dir  string
	// Framing of its stdio; its output is read as NDJSON whatever it is.
	Framing Framing
	// Tag is the proctree owner tag of the process and what it starts.
	Tag        string
	Log        *slog.Logger
	MaxMessage int          // bound of a framed message (default MaxMessage)
	Report     func(string) // a framed message dropped
}

// ErrNotFound marks an agent command that cannot be started.
var ErrNotFound = errors.New("agent command not found")

// Process is an agent process as a Conn: its stdout read, its stdin
// written; its stderr logged within bounds, its last lines kept for error
// messages. Ending it ends what it started, in its process group or not.
// Its stdin and stdout pipes grow when a large message crosses them,
// within a budget (pipeGrowth).
type Process struct {
	name   string
	cmd    *exec.Cmd
	tag    string
	log    *slog.Logger
	stdin  io.WriteCloser
	raw    *RawWriter // stdin's descriptor (TryWrite); nil if not known
	out    *deframer
	in     io.Writer
	outRaw *rawReader // stdout's descriptor; nil if not known

	stderr  *stderrLog
	stderrR *os.File
	stdoutR *os.File
	outEOF  chan struct{} // closed when stdout has been read to its end

	// The growth of its stdin and stdout pipes when a large message
	// crosses (nil when their descriptors are not known).
	inGrow, outGrow *pipeGrowth

	exited chan struct{}
	err    error // why it ended, set before exited closes

	mu       sync.Mutex
	stopping bool
}

// Start starts c's process.
func Start(c Command) (*Process, error) { return start(c, agentPipes()) }

// start starts c's process; its pipes grow within budget.
func start(c Command, budget *pipeBudget) (*Process, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, fmt.Errorf("agent %q has no cmd configured", c.Name)
	}
	path, err := exec.LookPath(c.Argv[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s (agent %q; install it or set agents.%s.cmd)", ErrNotFound, c.Argv[0], c.Name, c.Name)
	}
	cmd := exec.Command(path, c.Argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	// Own process group, so stopping the agent reaches what it started.
	cmd.SysProcAttr = processSysProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdin: %w", c.Name, err)
	}
	// Our own pipe rather than StdoutPipe: Wait closes that one, and what
	// an agent writes just before it exits (a program that is no agent
	// prints its usage and exits) would be lost unread.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("agent %s stdout: %w", c.Name, err)
	}
	cmd.Stdout = stdoutW
	// Our own pipe rather than StderrPipe: Wait closes that one, and the
	// lines an agent prints just before it exits (why it failed) would be
	// lost unread. wait() reads them to the end first.
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		stdout.Close()
		stdoutW.Close()
		return nil, fmt.Errorf("agent %s stderr: %w", c.Name, err)
	}
	cmd.Stderr = stderrW
	proctree.Own(c.Tag)
	err = proctree.Start(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
	stderrW.Close() // the agent has its copies
	stdoutW.Close()
	if err != nil {
		stderr.Close()
		stdout.Close()
		proctree.Disown(c.Tag)
		return nil, fmt.Errorf("start agent %s (%s): %w", c.Name, path, err)
	}
	log := c.Log
	if log == nil {
		log = discard
	}
	p := &Process{
		name:    c.Name,
		cmd:     cmd,
		tag:     c.Tag,
		log:     log,
		stdin:   stdin,
		in:      stdin,
		stderr:  newStderrLog(log),
		stderrR: stderr,
		stdoutR: stdout,
		outEOF:  make(chan struct{}),
		exited:  make(chan struct{}),
	}
	max := c.MaxMessage
	if max <= 0 {
		max = MaxMessage
	}
	// Framed output is accepted whatever was configured (an agent answers
	// in the framing it was spoken to in, or always frames).
	var out io.Reader = stdout
	if rc, err := stdout.SyscallConn(); err == nil {
		p.outGrow = newPipeGrowth(rc, budget)
		p.outRaw = newRawReader(rc)
		out = &growingReader{r: p.outRaw, g: p.outGrow}
	}
	p.out = newDeframer(&eofReader{r: out, eof: p.outEOF}, max, c.Report)
	if c.Framing == ContentLength {
		p.in = &framer{w: stdin}
	}
	// exec's stdin pipe is an *os.File inside: its descriptor is written
	// without waiting by TryWrite.
	if f, ok := stdin.(interface {
		SyscallConn() (syscall.RawConn, error)
	}); ok {
		if rc, err := f.SyscallConn(); err == nil {
			p.raw = NewRawWriter(rc)
			p.inGrow = newPipeGrowth(rc, budget)
		}
	}
	go p.stderr.drain(stderr)
	go p.wait()
	return p, nil
}

// Kind is Stdio.
func (p *Process) Kind() Kind { return Stdio }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Read implements Conn: the agent's stdout.
func (p *Process) Read(b []byte) (int, error) { return p.out.Read(b) }

// Take has take see the agent's output as it is read, whenever nothing
// read before it waits on the way (the output is not framed, and its
// buffer here is empty): take reports how many leading bytes it took, whole
// lines, which Read then never returns, and it must not keep them. While
// take takes all a read brings, the next read waits in the poller at once,
// with no read that finds the pipe empty: this saves a system call for
// each message that never goes further. take runs inside Read, on its
// goroutine; set it before the first Read. Without the output's descriptor
// take is never called.
func (p *Process) Take(take func(b []byte) int) {
	if p.outRaw == nil {
		return
	}
	d := p.out
	p.outRaw.take = func(b []byte) int {
		if !d.decided || d.framed || d.r.Buffered() > 0 {
			return 0
		}
		k := take(b)
		if k > 0 {
			p.outGrow.read(len(b)) // Read sees only what is left
		}
		return k
	}
}

// Write implements Conn: the agent's stdin.
func (p *Process) Write(b []byte) (int, error) {
	p.inGrow.writing(len(b))
	return p.in.Write(b)
}

// Done implements Conn: closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Err implements Conn: how the process ended, with its last stderr lines.
func (p *Process) Err() error {
	select {
	case <-p.exited:
		return p.err
	default:
		return nil
	}
}

// LastStderr is the last n lines the agent wrote to stderr ("" when none).
func (p *Process) LastStderr(n int) string { return p.stderr.lastLines(n) }

// Fatal is closed when the agent printed a line on stderr that says it
// will never answer (see fatalLines); FatalLine is that line.
func (p *Process) Fatal() <-chan struct{} { return p.stderr.fatal }

// FatalLine is the fatal stderr line Fatal reported ("" before).
func (p *Process) FatalLine() string {
	p.stderr.mu.Lock()
	defer p.stderr.mu.Unlock()
	return p.stderr.fatalLine
}

// WithStderr adds the last lines the agent wrote to stderr to err.
func (p *Process) WithStderr(err error) error { return withStderr(err, p.stderr) }

func (p *Process) wait() {
	err := p.cmd.Wait()
	// What it wrote last, to its end; a child still holding stderr open
	// gets a second.
	select {
	case <-p.stderr.done:
	case <-time.After(time.Second):
	}
	p.stderrR.Close()
	pid := p.cmd.Process.Pid
	proctree.Exited(pid)
	// Whatever the agent started goes with it, however it ended: its
	// group, and what left the group (setsid, daemons).
	proctree.Disown(p.tag)
	go endLeftovers(pid, p.tag, p.log)
	// Its stdout is read to the end before it counts as exited: what it
	// wrote last (a message, or why it is no agent) is handled first. A
	// child still holding it open gets a while.
	select {
	case <-p.outEOF:
	case <-time.After(stdoutGrace):
	}
	p.stdoutR.Close()
	// Both pipes are closed now (Wait closed stdin): what they held of
	// the budget is free for other agents.
	p.inGrow.release()
	p.outGrow.release()
	if err != nil {
		p.err = withStderr(fmt.Errorf("agent %s exited: %v", p.name, err), p.stderr)
	} else {
		p.err = withStderr(fmt.Errorf("agent %s exited", p.name), p.stderr)
	}
	p.log.Info("agent exited", "err", err)
	close(p.exited)
}

// Close implements Conn: it closes the agent's stdin (many agents exit on
// it), then sends SIGTERM, then SIGKILL to its process group, and ends
// whatever it left.
func (p *Process) Close() error {
	p.mu.Lock()
	if p.stopping {
		p.mu.Unlock()
		<-p.exited
		return nil
	}
	p.stopping = true
	p.mu.Unlock()
	p.stdin.Close()
	pgid := p.cmd.Process.Pid
	select {
	case <-p.exited:
	case <-time.After(200 * time.Millisecond):
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Second):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
	// Whatever it left, in its group or not, goes too.
	proctree.Kill(pgid, p.tag)
	return nil
}

// leftoverGrace is how long what an exited agent left behind has between
// SIGTERM and SIGKILL.
const leftoverGrace = time.Second

// endLeftovers ends what an exited agent left: SIGTERM, then SIGKILL.
func endLeftovers(pgid int, tag string, log *slog.Logger) {
	if proctree.Signal(pgid, tag, syscall.SIGTERM) == 0 {
		return
	}
	time.Sleep(leftoverGrace)
	if n := proctree.Kill(pgid, tag); n > 0 {
		log.Info("killed processes the agent left behind", "count", n)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// stdoutGrace is how long a process's stdout is read after it exited, for
// what a child that outlived it still writes.
const stdoutGrace = 5 * time.Second

// eofReader closes eof when r's Read first fails (its end, or closed).
type eofReader struct {
	r    io.Reader
	eof  chan struct{}
	once sync.Once
}

func (e *eofReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil {
		e.once.Do(func() { close(e.eof) })
	}
	return n, err
}
