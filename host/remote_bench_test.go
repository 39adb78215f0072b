package host

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/nvim-acp/nvim-acp/transport"
	"github.com/nvim-acp/nvim-acp/transport/transporttest"
)

// BenchmarkFSReadTransports is BenchmarkFSReadRoundTrip's read of a loaded
// 10,000-line buffer over each transport on loopback, the agent in this
// process: over pipes as on stdio, and served by transporttest as each kind
// of agent server serves it, the host connected as it connects (Dial, the
// gate, the fs fast path, the SDK). Reads are made during a prompt, as
// agents make them (ZeptoClaw's server carries the agent's requests only
// in a prompt's answer). No relay process between: what differs is the
// transport alone.
func BenchmarkFSReadTransports(b *testing.B) {
	for _, c := range []struct {
		name, kind, scheme string
		transport          transport.Kind
	}{
		{"pipe", "", "", ""},
		{"websocket", "acp", "ws", transport.WebSocket},
		{"sse-elephant", "sse", "http", transport.SSE},
		{"http-zeptoclaw", "http", "http", transport.HTTP},
		{"http-acp-rfd", "acp", "http", transport.HTTP},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFSBench(b)
			defer f.closer()
			loaded, _ := f.files(b)
			// The agent: reads during each prompt, timed.
			c2aR, c2aW := io.Pipe()
			a2cR, a2cW := io.Pipe()
			defer c2aW.Close()
			defer a2cW.Close()
			var agent *acp.Connection
			var lat []time.Duration
			reads := 0
			agent = acp.NewConnection(func(ctx context.Context, method string, _ json.RawMessage) (any, *acp.RequestError) {
				switch method {
				case acp.AgentMethodInitialize:
					return map[string]any{"protocolVersion": 1}, nil
				case acp.AgentMethodSessionPrompt:
					for i := 0; i < reads; i++ {
						start := time.Now()
						resp, err := acp.SendRequest[acp.ReadTextFileResponse](agent, ctx, acp.ClientMethodFsReadTextFile,
							acp.ReadTextFileRequest{SessionId: "bench", Path: loaded})
						if err != nil || len(resp.Content) != 560000 {
							return nil, acp.NewInternalError(map[string]any{"error": err, "bytes": len(resp.Content)})
						}
						lat = append(lat, time.Since(start))
					}
					return map[string]any{"stopReason": "end_turn"}, nil
				}
				return nil, nil
			}, a2cW, c2aR)
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			agent.SetLogger(quiet)
			var link io.ReadWriter = struct {
				io.Reader
				io.Writer
			}{a2cR, c2aW}
			if c.kind != "" {
				h, err := transporttest.Handler(c.kind, func() (*transporttest.Agent, error) {
					return transporttest.NewAgent(c2aW, a2cR, nil), nil
				}, "")
				if err != nil {
					b.Fatal(err)
				}
				srv := httptest.NewServer(h)
				defer srv.Close()
				conn, err := transport.Dial(context.Background(), transport.Remote{
					URL: c.scheme + strings.TrimPrefix(srv.URL, "http") + "/acp", Kind: c.transport})
				if err != nil {
					b.Fatal(err)
				}
				defer conn.Close()
				link = conn
			}
			a := benchAgent(f.s, link, link)
			a.conn.SetLogger(quiet)
			defer close(a.exited)
			ctx := context.Background()
			if _, err := acp.SendRequest[json.RawMessage](a.conn, ctx, acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
				b.Fatal(err)
			}
			prompt := func(n int) {
				reads = n
				if _, err := acp.SendRequest[acp.PromptResponse](a.conn, ctx, acp.AgentMethodSessionPrompt,
					acp.PromptRequest{SessionId: "bench", Prompt: []acp.ContentBlock{acp.TextBlock("read")}}); err != nil {
					b.Fatal(err)
				}
			}
			prompt(5) // warm up: the buffer cache, the connections
			lat = lat[:0]
			b.ResetTimer()
			prompt(b.N)
			b.StopTimer()
			reportLatency(b, lat)
		})
	}
}
