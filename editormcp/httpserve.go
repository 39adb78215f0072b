package editormcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"
)

// The HTTP transport: MCP's streamable HTTP on a loopback port, for agents
// that take only http servers. Every request carries its session's token
// as a bearer token; any other is refused before it reaches a server.

// httpPath is the servers' URL path.
const httpPath = "/mcp"

type httpServer struct {
	url string
	srv *http.Server
}

// http starts the hub's HTTP listener on first use.
func (h *Hub) http() (*httpServer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errors.New("mcp hub closed")
	}
	if h.web != nil {
		return h.web, nil
	}
	ln, err := loopback()
	if err != nil {
		return nil, err
	}
	w := &httpServer{url: "http://" + ln.Addr().String() + httpPath}
	w.srv = &http.Server{Handler: http.HandlerFunc(h.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := w.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			h.log.Warn("mcp: http server", "err", err)
		}
	}()
	h.web = w
	h.log.Info("mcp: http listening", "url", w.url)
	return w, nil
}

// serveHTTP passes a request with a known token to its endpoint's server.
func (h *Hub) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != httpPath {
		http.NotFound(w, r)
		return
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var e *Endpoint
	if ok {
		e = h.endpoint(strings.TrimSpace(token))
	}
	// endpoint looks tokens up by hash; compare the token itself too.
	if e == nil || subtle.ConstantTimeCompare([]byte(e.token), []byte(strings.TrimSpace(token))) != 1 {
		w.Header().Set("WWW-Authenticate", `Bearer realm="nvim-acp"`)
		http.Error(w, "unknown token: this server belongs to another session, or its session ended", http.StatusUnauthorized)
		return
	}
	e.web.ServeHTTP(w, r)
}

func (w *httpServer) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := w.srv.Shutdown(ctx); err != nil {
		return w.srv.Close()
	}
	return nil
}
