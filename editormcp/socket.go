package editormcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The stdio transport: the agent starts `nvim-acp mcp --socket PATH` (the
// session/new entry of Endpoint.Stdio), which connects to the host's
// socket, says hello with its token, and hands the host its own stdin and
// stdout (SCM_RIGHTS): the host then reads and writes the agent's pipes
// itself, as directly as it speaks ACP, and the child only waits. The
// socket stays open as the child's life line: either end closing it ends
// the MCP connection.
//
//	child → host: "NVIM-ACP-MCP 2 <token>\n"
//	host → child: "OK\n", or "ERROR <why>\n" and the connection closes
//	child → host: one byte with the child's fds 0 and 1

const (
	helloPrefix  = "NVIM-ACP-MCP 2 "
	helloTimeout = 10 * time.Second
	maxHello     = 256
)

// sockServer is the hub's unix socket.
type sockServer struct {
	dir, path string
	ln        net.Listener
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// socket starts the hub's socket on first use.
func (h *Hub) socket() (*sockServer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("mcp hub closed")
	}
	if h.sock != nil {
		return h.sock, nil
	}
	dir, err := privateDir()
	if err != nil {
		return nil, err
	}
	path := socketPath(dir)
	ln, err := net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("mcp socket: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &sockServer{dir: dir, path: path, ln: ln, cancel: cancel}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		h.accept(ctx, s)
	}()
	h.sock = s
	h.log.Info("mcp: socket listening", "path", path)
	return s, nil
}

func (h *Hub) accept(ctx context.Context, s *sockServer) {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("mcp: socket accept", "err", err)
			}
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			h.serveSocket(ctx, c)
		}()
	}
}

// serveSocket checks a connection's hello, then serves its endpoint on it.
func (h *Hub) serveSocket(ctx context.Context, c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	br := bufio.NewReaderSize(c, 64<<10)
	line, err := readLine(br, maxHello)
	if err != nil {
		h.log.Warn("mcp: socket hello", "err", err)
		c.Close()
		return
	}
	token, ok := strings.CutPrefix(line, helloPrefix)
	var e *Endpoint
	if ok {
		e = h.endpoint(token)
	}
	if e == nil {
		h.log.Warn("mcp: socket connection with an unknown token refused")
		_, _ = io.WriteString(c, "ERROR unknown token: this server belongs to another session, or its session ended\n")
		c.Close()
		return
	}
	if _, err := io.WriteString(c, "OK\n"); err != nil {
		c.Close()
		return
	}
	in, out, err := receiveStdio(c.(*net.UnixConn))
	if err != nil {
		h.log.Warn("mcp: socket: the child's stdio", "err", err)
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	mc := newConn(bufio.NewReaderSize(in, 64<<10), closers{in, out, c}, out)
	go func() { // the child gone, or the hub's end: the connection ends
		done := make(chan struct{})
		go func() {
			_, _ = c.Read(make([]byte, 1)) // the child never writes: EOF or an error
			close(done)
		}()
		select {
		case <-ctx.Done():
		case <-done:
		}
		mc.Close()
	}()
	h.serve(context.WithValue(ctx, splicingKey{}, true), e, mc, "socket")
	mc.Close()
}

// receiveStdio reads the child's stdin and stdout from c, pollable (so
// closing them ends a read).
func receiveStdio(c *net.UnixConn) (in, out *os.File, err error) {
	oob := make([]byte, syscall.CmsgSpace(2*4))
	_, oobn, _, _, err := c.ReadMsgUnix(make([]byte, 1), oob)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, nil, fmt.Errorf("no file descriptors (%v)", err)
	}
	fds, err := syscall.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, nil, fmt.Errorf("want 2 file descriptors, got %d (%v)", len(fds), err)
	}
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
		_ = syscall.SetNonblock(fd, true)
	}
	return os.NewFile(uintptr(fds[0]), "mcp-agent-in"), os.NewFile(uintptr(fds[1]), "mcp-agent-out"), nil
}

// closers closes each of its members.
type closers []io.Closer

func (cs closers) Close() error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// readLine reads one line of at most max bytes, without its newline.
func readLine(br *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		if c == '\n' {
			return string(b), nil
		}
		if len(b) >= max {
			return "", errors.New("hello line too long")
		}
		b = append(b, c)
	}
}

func (s *sockServer) close() error {
	s.cancel()
	err := s.ln.Close()
	s.wg.Wait()
	os.RemoveAll(s.dir)
	return err
}

// RunChild is `nvim-acp mcp --socket PATH`, the stdio server an agent
// starts: it connects to the host's socket with the token in $EnvToken,
// hands the host its stdin and stdout, and waits until the host ends the
// connection (or ctx ends).
func RunChild(ctx context.Context, socket, token string, stdin, stdout *os.File) error {
	if socket == "" || token == "" {
		return fmt.Errorf("mcp: --socket and $%s are required (this command is started by nvim-acp's agents)", EnvToken)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("mcp: connect to the editor: %w (is its Neovim still running?)", err)
	}
	uc := c.(*net.UnixConn)
	defer uc.Close()
	if _, err := io.WriteString(uc, helloPrefix+token+"\n"); err != nil {
		return fmt.Errorf("mcp: hello: %w", err)
	}
	br := bufio.NewReader(uc)
	_ = uc.SetReadDeadline(time.Now().Add(helloTimeout))
	answer, err := readLine(br, maxHello)
	if err != nil {
		return fmt.Errorf("mcp: hello: %w", err)
	}
	if answer != "OK" {
		return fmt.Errorf("mcp: the editor refused the connection: %s", strings.TrimPrefix(answer, "ERROR "))
	}
	_ = uc.SetReadDeadline(time.Time{})
	rights := syscall.UnixRights(int(stdin.Fd()), int(stdout.Fd()))
	if _, _, err := uc.WriteMsgUnix([]byte{0}, rights, nil); err != nil {
		return fmt.Errorf("mcp: hand stdio to the editor: %w", err)
	}
	go func() {
		<-ctx.Done()
		uc.Close()
	}()
	_, _ = br.ReadByte() // the host never writes again: its end, or ctx's
	return nil
}
