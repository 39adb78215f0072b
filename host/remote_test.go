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
			a, _, err := h.agentFor(AgentSpec{Name: "remote", RemoteSpec: RemoteSpec{URL: "http://" + addr + "/acp", Transport: kind}})
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

// Reconnecting stops when the host shuts down, not at the end of its
// backoff (10 s at most, 10 minutes in all).
func TestReconnectStopsAtShutdown(t *testing.T) {
	defer func(d time.Duration) { reconnectFirst = d }(reconnectFirst)
	reconnectFirst = time.Hour
	h := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	old, _, err := h.agentFor(AgentSpec{Name: "remote", RemoteSpec: RemoteSpec{URL: "http://127.0.0.1:9/acp"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		h.reconnect(old, []*Session{newSession(h, 1, SessionOptions{})})
		close(done)
	}()
	h.Shutdown()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reconnecting went on after the host shut down")
	}
}
