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
	"time"
)

// The stdio transport: the agent starts `nvim-acp mcp --socket PATH` (the
// session/new entry of Endpoint.Stdio), which connects to the host's
// socket, says hello with its token, and then passes MCP's newline
// delimited JSON both ways unchanged.
//
//	child → host: "NVIM-ACP-MCP 1 <token>\n"
//	host → child: "OK\n", or "ERROR <why>\n" and the connection closes.

const (
	helloPrefix  = "NVIM-ACP-MCP 1 "
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
	_ = c.SetReadDeadline(time.Time{})
	if _, err := io.WriteString(c, "OK\n"); err != nil {
		c.Close()
		return
	}
	done := make(chan struct{})
	go func() { // the hub's end closes the connection
		select {
		case <-ctx.Done():
		case <-done:
		}
		c.Close()
	}()
	h.serve(ctx, e, newConn(br, c, c), "socket")
	close(done)
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
// starts: it connects to the host's socket with the token in $EnvToken and
// copies MCP messages between its stdin/stdout and the host until either
// side ends.
func RunChild(ctx context.Context, socket, token string, stdin io.Reader, stdout io.Writer) error {
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
	br := bufio.NewReaderSize(uc, 64<<10)
	_ = uc.SetReadDeadline(time.Now().Add(helloTimeout))
	answer, err := readLine(br, maxHello)
	if err != nil {
		return fmt.Errorf("mcp: hello: %w", err)
	}
	if answer != "OK" {
		return fmt.Errorf("mcp: the editor refused the connection: %s", strings.TrimPrefix(answer, "ERROR "))
	}
	_ = uc.SetReadDeadline(time.Time{})
	go func() {
		_, _ = io.Copy(uc, stdin) // spliced from a pipe on Linux
		_ = uc.CloseWrite()       // the agent closed our stdin: the host ends the session
	}()
	go func() {
		<-ctx.Done()
		uc.Close()
	}()
	// What came with the answer, then the socket itself (spliced to a pipe
	// on Linux: no copy through this process).
	_, err = io.CopyN(stdout, br, int64(br.Buffered()))
	if err == nil {
		_, err = io.Copy(stdout, uc)
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}
