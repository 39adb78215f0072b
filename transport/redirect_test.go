package transport

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRedirectToAnotherOrigin: the configured agent server answers every
// request with a 307 to another origin (here localhost instead of
// 127.0.0.1: another host, in plain http). The client follows none of
// them, in every kind: the other origin never sees a request nor the
// agent's headers (an API key), and the error says why (issue 31, item 5).
func TestRedirectToAnotherOrigin(t *testing.T) {
	var mu sync.Mutex
	var reached []string // what the other origin got
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reached = append(reached, r.Method+" "+r.URL.Path+" key="+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		http.Error(w, "evil", http.StatusTeapot)
	}))
	defer other.Close()
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer agent.Close()
	for _, kind := range []Kind{WebSocket, SSE, HTTP, ""} {
		t.Run("kind="+string(kind), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, err := Dial(ctx, Remote{URL: agent.URL + "/acp", Kind: kind,
				Header: http.Header{"X-Api-Key": {"sk-secret"}}})
			if err == nil {
				conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"))
				select {
				case <-conn.Done():
				case <-ctx.Done():
					t.Fatal("the redirect was neither followed nor refused")
				}
				err = conn.Err()
			}
			if !errors.Is(err, ErrRedirected) {
				t.Fatalf("err = %v, want ErrRedirected", err)
			}
			for _, w := range []string{"redirect to " + elsewhere + "/acp", "not followed", "sent to " + agent.URL + " only"} {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("err = %v, want %q in it", err, w)
				}
			}
			if strings.Contains(err.Error(), "sk-secret") {
				t.Fatalf("the error shows the key: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reached) > 0 {
				t.Fatalf("the other origin was reached: %q", reached)
			}
		})
	}
}

// TestRedirectWithinOrigin: a redirect to another path of the same origin
// is followed, with the headers.
func TestRedirectWithinOrigin(t *testing.T) {
	p := newPeer()
	rfd := rfdServer(p)
	var mu sync.Mutex // the GET of the connection's stream runs beside the test
	var key string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/acp", http.StatusTemporaryRedirect)
			return
		}
		if r.Method == http.MethodPost {
			mu.Lock()
			key = r.Header.Get("X-Api-Key")
			mu.Unlock()
		}
		rfd.ServeHTTP(w, r)
	}))
	defer srv.Close()
	conn, err := Dial(context.Background(), Remote{URL: srv.URL + "/old", Kind: HTTP, Header: http.Header{"X-Api-Key": {"k"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := lines(conn)
	conn.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n"))
	if m := recv(t, p.in); !strings.Contains(m, "initialize") {
		t.Fatalf("server got %q", m)
	}
	p.out <- `{"jsonrpc":"2.0","id":1,"result":{}}`
	if m := recv(t, got); !strings.Contains(m, `"result"`) {
		t.Fatalf("client got %q", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if key != "k" {
		t.Fatalf("the headers did not follow the redirect within the origin: key %q", key)
	}
}
