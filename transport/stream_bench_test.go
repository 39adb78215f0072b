package transport

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/nvim-acp/nvim-acp/transport/transporttest"
)

// BenchmarkStream carries a turn of streamed chunks (issue 9's burst: a
// session/prompt answered by streamChunks agent_message_chunk notifications,
// then its response) from an agent served in this process to a reader that
// takes lines as the host's gate does (a 1 MiB bufio.Reader, ReadSlice),
// over each transport and over a pipe (an agent on stdio). Server and
// client share the process, so ns/op is the CPU of both ends; the
// per-message costs of each end show in a CPU profile
// (-cpuprofile, the transport and transporttest packages apart).
//
//	go test -run '^$' -bench Stream -benchmem ./transport/
func BenchmarkStream(b *testing.B) {
	for _, c := range []struct {
		name, kind, scheme string
		k                  Kind
	}{
		{"pipe", "", "", Stdio},
		{"websocket", "acp", "ws", WebSocket},
		{"sse-elephant", "sse", "http", SSE},
		{"http-zeptoclaw", "http", "http", HTTP},
		{"http-acp-rfd", "acp", "http", HTTP},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				var conn Conn
				defer pprof.SetGoroutineLabels(context.Background())
				if c.k == Stdio {
					conn = pipeConn(b)
				} else {
					srv := httptest.NewServer(must(transporttest.Handler(c.kind, func() (*transporttest.Agent, error) {
						return burstAgent(), nil
					}, "")))
					var err error
					pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("side", "client")))
					conn, err = Dial(context.Background(), Remote{URL: c.scheme + "://" + strings.TrimPrefix(srv.URL, "http://") + "/acp", Kind: c.k})
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(srv.Close)
				}
				// The client's goroutines (and the HTTP client's) are labelled
				// side=client: -tagfocus side=client shows its costs alone.
				pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
					streamTurn(b, conn)
				})
				conn.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*streamChunks), "ns/msg")
		})
	}
}

const streamChunks = 20000

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// streamTurn initializes conn's agent, prompts it and reads every line of
// the turn, as the gate does.
func streamTurn(b *testing.B, conn Conn) {
	r := bufio.NewReaderSize(conn, 1<<20)
	next := func() []byte {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatalf("read: %v", err)
		}
		return line
	}
	fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	if l := next(); !bytes.Contains(l, []byte(`"id":0`)) {
		b.Fatalf("initialize answered %s", l)
	}
	fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`+"\n")
	n := 0
	for {
		l := next()
		if bytes.Contains(l, []byte(`"id":1`)) {
			break
		}
		n++
	}
	if n != streamChunks {
		b.Fatalf("%d chunks, want %d", n, streamChunks)
	}
}

// burstAgent is an agent in this process: initialize is answered at once,
// session/prompt with streamChunks chunks, each written on its own (as
// acp-go-sdk writes every message), then its response.
func burstAgent() *transporttest.Agent {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go playBurst(inR, outW)
	return transporttest.NewAgent(inW, outR, func() { inR.Close(); outW.Close() })
}

func playBurst(in io.Reader, out io.WriteCloser) {
	defer out.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		id := strings.TrimSuffix(strings.SplitN(strings.SplitN(line, `"id":`, 2)[1], ",", 2)[0], "}")
		if strings.Contains(line, `"session/prompt"`) {
			for i := 0; i < streamChunks; i++ {
				if _, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`+
					`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"function `+"`load_config`"+` reads **every** %d"}}}}`+"\n", i); err != nil {
					return
				}
			}
		}
		if _, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", id); err != nil {
			return
		}
	}
}

// pipeConn is an agent on stdio: the burst agent writing to a kernel pipe
// read through the process transport's deframer.
func pipeConn(b *testing.B) Conn {
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	go playBurst(inR, outW)
	return &pipeTestConn{r: newDeframer(outR, MaxMessage, nil), w: inW, closers: []io.Closer{outR, inW}, done: make(chan struct{})}
}

type pipeTestConn struct {
	r       io.Reader
	w       io.Writer
	closers []io.Closer
	done    chan struct{}
}

func (p *pipeTestConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeTestConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeTestConn) Close() error {
	for _, c := range p.closers {
		c.Close()
	}
	close(p.done)
	return nil
}
func (p *pipeTestConn) Done() <-chan struct{} { return p.done }
func (p *pipeTestConn) Err() error            { return nil }
