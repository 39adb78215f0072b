package host

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// A remote agent whose server is not there fails its start at once, with
// the reason, for every transport.
func TestRemoteAgentServerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, kind := range []string{"http", "sse", "websocket", ""} {
		t.Run(kind, func(t *testing.T) {
			h := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
			a, err := h.agentFor(AgentSpec{Name: "remote", RemoteSpec: RemoteSpec{URL: "http://" + addr + "/acp", Transport: kind}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = a.ready(ctx)
			if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "connection refused") {
				t.Fatalf("ready = %v (ctx %v)", err, ctx.Err())
			}
		})
	}
}
