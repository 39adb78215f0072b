package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const oneAgent = `{"version":"1.0.0","agents":[
  {"id":"served","name":"Served","version":"2.0.0","description":"from the test server",
   "distribution":{"npx":{"package":"served@2.0.0"}}}],"extensions":[]}`

// registryServer serves body with an ETag and answers conditional requests
// with 304; it records the requests it saw.
type registryServer struct {
	*httptest.Server
	mu       sync.Mutex
	body     string
	etag     string
	cc       string
	requests []*http.Request
}

func newRegistryServer(t *testing.T, body string) *registryServer {
	s := &registryServer{body: body, etag: `"v1"`}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r)
		body, etag, cc := s.body, s.etag, s.cc
		s.mu.Unlock()
		if cc != "" {
			w.Header().Set("Cache-Control", cc)
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", "Mon, 02 Feb 2026 10:00:00 GMT")
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *registryServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *registryServer) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

// clock is a settable time for max-age tests.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestSourceFetchesCachesAndRevalidates(t *testing.T) {
	srv := newRegistryServer(t, oneAgent)
	clk := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	src := &Source{URL: srv.URL + "/registry.json", CacheDir: t.TempDir(), MaxAge: time.Hour, Now: clk.now}
	ctx := context.Background()

	l, err := src.Load(ctx, LoadOptions{})
	if err != nil || l.Origin != OriginNetwork || l.Err != nil || len(l.Agents) != 1 || l.Agents[0].ID != "served" {
		t.Fatalf("first load: %+v, %v", l, err)
	}
	if got := srv.last().Header.Get("User-Agent"); !strings.HasPrefix(got, "nvim-acp") {
		t.Errorf("User-Agent %q", got)
	}

	// Within max-age: the cache answers, the server is not asked.
	clk.t = clk.t.Add(30 * time.Minute)
	l, err = src.Load(ctx, LoadOptions{})
	if err != nil || l.Origin != OriginCache || l.Stale || len(l.Agents) != 1 || srv.count() != 1 {
		t.Fatalf("fresh cache: %+v, %v, %d requests", l, err, srv.count())
	}

	// Past max-age: a conditional request; 304 keeps the copy.
	clk.t = clk.t.Add(time.Hour)
	l, err = src.Load(ctx, LoadOptions{})
	if err != nil || l.Origin != OriginNetwork || !l.FetchedAt.Equal(clk.t) || len(l.Agents) != 1 || srv.count() != 2 {
		t.Fatalf("revalidated: %+v, %v, %d requests", l, err, srv.count())
	}
	if r := srv.last(); r.Header.Get("If-None-Match") != `"v1"` || r.Header.Get("If-Modified-Since") == "" {
		t.Fatalf("conditional headers: %v", r.Header)
	}

	// Refresh asks even when fresh; a changed registry replaces the copy.
	srv.mu.Lock()
	srv.body = strings.Replace(oneAgent, `"2.0.0"`, `"2.1.0"`, 1)
	srv.body = strings.Replace(srv.body, "served@2.0.0", "served@2.1.0", 1)
	srv.etag = `"v2"`
	srv.mu.Unlock()
	l, err = src.Load(ctx, LoadOptions{Refresh: true})
	if err != nil || l.Origin != OriginNetwork || l.Agents[0].Version != "2.1.0" {
		t.Fatalf("refresh: %+v, %v", l, err)
	}
	l, err = src.Load(ctx, LoadOptions{Offline: true})
	if err != nil || l.Origin != OriginCache || l.Agents[0].Version != "2.1.0" {
		t.Fatalf("cached after refresh: %+v, %v", l, err)
	}
}

// The server's Cache-Control max-age wins over ours.
func TestSourceHonoursServerMaxAge(t *testing.T) {
	srv := newRegistryServer(t, oneAgent)
	srv.cc = "public, max-age=60"
	clk := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	src := &Source{URL: srv.URL, CacheDir: t.TempDir(), MaxAge: 24 * time.Hour, Now: clk.now}
	if _, err := src.Load(context.Background(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	clk.t = clk.t.Add(2 * time.Minute)
	l, err := src.Load(context.Background(), LoadOptions{})
	if err != nil || l.Origin != OriginNetwork || srv.count() != 2 {
		t.Fatalf("after the server's max-age: %+v, %v, %d requests", l, err, srv.count())
	}
}

// Offline: the stale cache, then the bundled snapshot, each saying why.
func TestSourceOfflineFallsBackToCacheThenBundled(t *testing.T) {
	srv := newRegistryServer(t, oneAgent)
	cache := t.TempDir()
	clk := &clock{t: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)}
	src := &Source{URL: srv.URL + "/registry.json", CacheDir: cache, MaxAge: time.Hour, Now: clk.now}
	if _, err := src.Load(context.Background(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.Close() // the network goes away
	clk.t = clk.t.Add(2 * time.Hour)

	l, err := src.Load(context.Background(), LoadOptions{})
	if err != nil || l.Origin != OriginCache || !l.Stale || l.Err == nil || len(l.Agents) != 1 || l.Agents[0].ID != "served" {
		t.Fatalf("stale cache: %+v, %v", l, err)
	}

	// No cache either: the bundled snapshot.
	os.RemoveAll(cache)
	l, err = src.Load(context.Background(), LoadOptions{})
	if err != nil || l.Origin != OriginBundled || l.Err == nil {
		t.Fatalf("bundled: %+v, %v", l, err)
	}
	if _, ok := l.Agent("gemini"); !ok || len(l.Agents) != 11 {
		t.Fatalf("bundled has %d agents", len(l.Agents))
	}

	// Offline mode never asks the network.
	l, err = (&Source{URL: "http://127.0.0.1:1/never", CacheDir: t.TempDir()}).Load(context.Background(), LoadOptions{Offline: true})
	if err != nil || l.Origin != OriginBundled {
		t.Fatalf("offline: %+v, %v", l, err)
	}
}

// A server that never answers costs Timeout, then the fallback.
func TestSourceTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	src := &Source{URL: srv.URL, CacheDir: t.TempDir(), Timeout: 100 * time.Millisecond}
	done := make(chan *Loaded, 1)
	go func() {
		l, err := src.Load(context.Background(), LoadOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- l
	}()
	select {
	case l := <-done:
		if l.Origin != OriginBundled || l.Err == nil || !strings.Contains(l.Err.Error(), "no answer within 100ms") {
			t.Fatalf("got %+v (err %v)", l, l.Err)
		}
	case <-time.After(30 * time.Second): // the server never answers: only the timeout can end Load
		t.Fatal("Load did not honour its timeout")
	}
}

// Bad answers never replace a good cache.
func TestSourceRejectsBadAnswers(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		maxSize int64
		want    string
	}{
		{"server error", 500, "oops", 0, "500"},
		{"not json", 200, "<html>", 0, "decode registry"},
		{"not a registry", 200, `{"version":"1.0.0"}`, 0, "no \"agents\""},
		{"too large", 200, oneAgent, 100, "larger than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := newRegistryServer(t, oneAgent)
			cache := t.TempDir()
			clk := &clock{t: time.Now()}
			src := &Source{URL: "http://registry.test/registry.json", CacheDir: cache, Now: clk.now, MaxSize: tt.maxSize,
				Client: redirectClient(good.URL)}
			src.MaxSize = 0
			if _, err := src.Load(context.Background(), LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer bad.Close()
			src.Client = redirectClient(bad.URL)
			src.MaxSize = tt.maxSize
			l, err := src.Load(context.Background(), LoadOptions{Refresh: true})
			if err != nil || l.Origin != OriginCache || l.Err == nil || !strings.Contains(l.Err.Error(), tt.want) {
				t.Fatalf("got %+v, %v (err %v)", l, err, l.Err)
			}
			if len(l.Agents) != 1 || l.Agents[0].ID != "served" {
				t.Fatalf("cache replaced: %+v", l.Agents)
			}
			data, _ := os.ReadFile(filepath.Join(cache, cacheFile))
			if string(data) != oneAgent {
				t.Fatalf("cache file now %q", data)
			}
		})
	}
}

// A cache written for another URL is not used for this one.
func TestSourceCacheIsPerURL(t *testing.T) {
	srv := newRegistryServer(t, oneAgent)
	cache := t.TempDir()
	if _, err := (&Source{URL: srv.URL + "/a.json", CacheDir: cache}).Load(context.Background(), LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := (&Source{URL: srv.URL + "/b.json", CacheDir: cache}).Load(context.Background(), LoadOptions{Offline: true})
	if err != nil || l.Origin != OriginBundled {
		t.Fatalf("got %+v, %v", l, err)
	}
}

// redirectClient sends every request to base, whatever its URL says.
func redirectClient(base string) *http.Client {
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r2 := r.Clone(r.Context())
		u := *r.URL
		u.Scheme = "http"
		u.Host = strings.TrimPrefix(base, "http://")
		r2.URL = &u
		r2.Host = u.Host
		return http.DefaultTransport.RoundTrip(r2)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
