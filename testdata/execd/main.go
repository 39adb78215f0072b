// Command execd is a stand-in for `docker exec` in tests: a daemon runs
// commands for its clients, as its own children with its own environment
// (nothing of the client's leaks through), and a client relays one
// command's stdin, stdout and stderr and exits with its status. Killing
// the client does not end the command: the daemon owns it, as dockerd
// owns what `docker exec` started.
//
//	execd serve -sock PATH                   the daemon, until killed
//	execd run -sock PATH [-e K=V]... -- ARGV... one command through it
//
// As with docker exec, -e sets a variable for the command over the
// daemon's environment. The stream: the client sends one JSON line
// {"argv": [...], "env": [...]}, then its
// stdin (a half-close at its end). The daemon sends frames of a kind byte
// ('o' stdout, 'e' stderr, 'x' exit status), a big-endian uint32 length
// and the data; the exit status is a big-endian int32, 128+n for signal n.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: execd serve|run -sock PATH [-- ARGV...]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	sock := fs.String("sock", "", "the daemon's unix socket")
	var env envFlag
	fs.Var(&env, "e", "K=V for the command (repeatable)")
	_ = fs.Parse(os.Args[2:])
	if *sock == "" {
		fmt.Fprintln(os.Stderr, "execd: -sock is required")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		if err := serve(*sock); err != nil {
			fmt.Fprintln(os.Stderr, "execd serve:", err)
			os.Exit(1)
		}
	case "run":
		os.Exit(run(*sock, header{Argv: fs.Args(), Env: env}))
	default:
		fmt.Fprintf(os.Stderr, "execd: unknown mode %q\n", os.Args[1])
		os.Exit(2)
	}
}

// envFlag collects -e K=V.
type envFlag []string

func (e *envFlag) String() string      { return fmt.Sprint(*e) }
func (e *envFlag) Set(kv string) error { *e = append(*e, kv); return nil }

// header is what a client sends first.
type header struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env,omitempty"`
}

// serve accepts clients until the process is killed.
func serve(sock string) error {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		ln.Close() // removes the socket
		os.Exit(0)
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go handle(c.(*net.UnixConn))
	}
}

// frameWriter writes frames to a client; once the client is gone, what the
// command writes is discarded (the command runs on).
type frameWriter struct {
	mu   sync.Mutex
	conn net.Conn
	gone bool
}

func (w *frameWriter) frame(kind byte, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone {
		return
	}
	hdr := make([]byte, 5)
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(data)))
	if _, err := w.conn.Write(append(hdr, data...)); err != nil {
		w.gone = true
	}
}

// stream is one of the command's outputs as frames of kind.
type stream struct {
	w    *frameWriter
	kind byte
}

func (s stream) Write(p []byte) (int, error) {
	s.w.frame(s.kind, p)
	return len(p), nil
}

// handle runs one client's command.
func handle(c *net.UnixConn) {
	defer c.Close()
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	var h header
	if err == nil {
		err = json.Unmarshal(line, &h)
	}
	w := &frameWriter{conn: c}
	if err == nil && len(h.Argv) == 0 {
		err = errors.New("empty argv")
	}
	if err != nil {
		w.frame('e', []byte("execd: "+err.Error()+"\n"))
		w.frame('x', status(126))
		return
	}
	cmd := exec.Command(h.Argv[0], h.Argv[1:]...)
	// The daemon's environment and a session of its own: nothing ties
	// the command to the client.
	cmd.Env = append(os.Environ(), h.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Stdout = stream{w, 'o'}
	cmd.Stderr = stream{w, 'e'}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		w.frame('e', []byte("execd: "+err.Error()+"\n"))
		w.frame('x', status(127))
		return
	}
	go func() {
		_, _ = io.Copy(stdin, r) // until the client's half-close, or it is gone
		stdin.Close()
	}()
	err = cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		code = 125
	}
	w.frame('x', status(code))
}

// status is an exit status frame's data.
func status(code int) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(int32(code)))
}

// run sends h to the daemon, relays stdio and returns the exit status.
func run(sock string, h header) int {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "execd run:", err)
		return 125
	}
	c := conn.(*net.UnixConn)
	defer c.Close()
	line, _ := json.Marshal(h)
	if _, err := c.Write(append(line, '\n')); err != nil {
		fmt.Fprintln(os.Stderr, "execd run:", err)
		return 125
	}
	go func() {
		_, _ = io.Copy(c, os.Stdin)
		_ = c.CloseWrite()
	}()
	r := bufio.NewReader(c)
	hdr := make([]byte, 5)
	for {
		if _, err := io.ReadFull(r, hdr); err != nil {
			fmt.Fprintln(os.Stderr, "execd run: connection lost:", err)
			return 255
		}
		data := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
		if _, err := io.ReadFull(r, data); err != nil {
			fmt.Fprintln(os.Stderr, "execd run: connection lost:", err)
			return 255
		}
		switch hdr[0] {
		case 'o':
			_, _ = os.Stdout.Write(data)
		case 'e':
			_, _ = os.Stderr.Write(data)
		case 'x':
			return int(int32(binary.BigEndian.Uint32(data)))
		}
	}
}
