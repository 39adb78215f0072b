package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nvim-acp/nvim-acp/internal/atomicfile"
)

// DefaultURL is where the ACP registry is published.
const DefaultURL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"

// Defaults of Source.
const (
	DefaultTimeout = 10 * time.Second
	DefaultMaxAge  = time.Hour
	// DefaultMaxSize bounds a registry.json (the live one is a few hundred KiB).
	DefaultMaxSize = 16 << 20
)

// Origins of a loaded registry.
const (
	OriginNetwork = "network" // fetched now (or revalidated with a 304)
	OriginCache   = "cache"   // the cached copy
	OriginBundled = "bundled" // the snapshot built into the binary
)

// Source loads the registry: from the network, the cache, or the bundled
// snapshot, in that order of preference.
type Source struct {
	URL      string        // registry.json; DefaultURL when empty
	CacheDir string        // where the copy and its metadata are kept; no cache when empty
	Client   *http.Client  // http.DefaultClient when nil
	Timeout  time.Duration // bound of one fetch; DefaultTimeout when 0
	// MaxAge is how long a cached copy is used without asking the server,
	// unless the server said otherwise (Cache-Control: max-age);
	// DefaultMaxAge when 0.
	MaxAge  time.Duration
	MaxSize int64            // largest registry.json accepted; DefaultMaxSize when 0
	Now     func() time.Time // time.Now when nil (tests)
}

// LoadOptions tune one Load.
type LoadOptions struct {
	// Offline never touches the network: the cache (even stale), else the
	// bundled snapshot.
	Offline bool
	// Refresh asks the server even when the cached copy is fresh (still
	// conditionally, so an unchanged registry costs a 304).
	Refresh bool
}

// Loaded is a registry and where it came from.
type Loaded struct {
	*Registry
	Origin    string    // OriginNetwork, OriginCache or OriginBundled
	FetchedAt time.Time // when the copy was fetched or revalidated (zero for bundled)
	Stale     bool      // older than its max-age
	// Err says why the network copy is not the one returned (offline,
	// timeout, bad status, bad JSON...); nil when it is, or when a fresh
	// cache made asking unnecessary.
	Err error
}

// cacheMeta is kept beside the cached registry.json.
type cacheMeta struct {
	URL          string    `json:"url"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	FetchedAt    time.Time `json:"fetched_at"`
	MaxAge       int64     `json:"max_age_seconds,omitempty"` // from Cache-Control, 0 = ours
}

const (
	cacheFile = "registry.json"
	metaFile  = "registry.meta.json"
)

func (s *Source) url() string {
	if s.URL != "" {
		return s.URL
	}
	return DefaultURL
}

func (s *Source) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Load returns the best registry it can: it never fails for lack of
// network, falling back to the cache and then to the bundled snapshot, and
// says in Loaded.Err why the network copy was not used. It fails only when
// the bundled snapshot is unreadable, which a test rules out.
func (s *Source) Load(ctx context.Context, opts LoadOptions) (*Loaded, error) {
	cached, meta, cacheErr := s.readCache()
	if cached != nil {
		fresh := s.now().Sub(meta.FetchedAt) < s.maxAge(meta)
		if opts.Offline || (fresh && !opts.Refresh) {
			return &Loaded{Registry: cached, Origin: OriginCache, FetchedAt: meta.FetchedAt, Stale: !fresh}, nil
		}
	}
	var netErr error
	if opts.Offline {
		netErr = errors.New("offline")
	} else {
		l, err := s.fetch(ctx, cached, meta)
		if err == nil {
			return l, nil
		}
		netErr = err
	}
	if cached != nil {
		fresh := s.now().Sub(meta.FetchedAt) < s.maxAge(meta)
		return &Loaded{Registry: cached, Origin: OriginCache, FetchedAt: meta.FetchedAt, Stale: !fresh, Err: netErr}, nil
	}
	if cacheErr != nil && !errors.Is(cacheErr, os.ErrNotExist) {
		netErr = errors.Join(netErr, cacheErr)
	}
	b, err := Bundled()
	if err != nil {
		return nil, errors.Join(netErr, err)
	}
	return &Loaded{Registry: b, Origin: OriginBundled, Stale: true, Err: netErr}, nil
}

func (s *Source) maxAge(m cacheMeta) time.Duration {
	switch {
	case m.MaxAge < 0: // the server said no-cache: always revalidate
		return 0
	case m.MaxAge > 0:
		return time.Duration(m.MaxAge) * time.Second
	}
	if s.MaxAge > 0 {
		return s.MaxAge
	}
	return DefaultMaxAge
}

// fetch asks the server, conditionally when a cached copy exists.
func (s *Source) fetch(ctx context.Context, cached *Registry, meta cacheMeta) (*Loaded, error) {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := s.url()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch registry %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if cached != nil {
		if meta.ETag != "" {
			req.Header.Set("If-None-Match", meta.ETag)
		}
		if meta.LastModified != "" {
			req.Header.Set("If-Modified-Since", meta.LastModified)
		}
	}
	client := s.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("fetch registry %s: no answer within %s", u, timeout)
		}
		return nil, fmt.Errorf("fetch registry: %w", err)
	}
	defer resp.Body.Close()
	now := s.now()
	maxAge := parseMaxAge(resp.Header.Get("Cache-Control"))
	switch {
	case resp.StatusCode == http.StatusNotModified && cached != nil:
		meta.FetchedAt = now
		meta.MaxAge = maxAge
		if e := resp.Header.Get("ETag"); e != "" {
			meta.ETag = e
		}
		_ = s.writeMeta(meta) // the copy is still good; a failed note only costs a later request
		return &Loaded{Registry: cached, Origin: OriginNetwork, FetchedAt: now}, nil
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("fetch registry %s: %s", u, resp.Status)
	}
	limit := s.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("fetch registry %s: not received within %s", u, timeout)
		}
		return nil, fmt.Errorf("fetch registry %s: %w", u, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("fetch registry %s: larger than %d bytes", u, limit)
	}
	reg, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("fetch registry %s: %w", u, err)
	}
	m := cacheMeta{URL: u, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), FetchedAt: now, MaxAge: maxAge}
	_ = s.writeCache(data, m) // an unwritable cache dir must not cost the user the list
	return &Loaded{Registry: reg, Origin: OriginNetwork, FetchedAt: now}, nil
}

// UserAgent is sent with every request.
var UserAgent = "nvim-acp (+https://github.com/nvim-acp/nvim-acp)"

func parseMaxAge(cc string) int64 {
	for _, part := range strings.Split(cc, ",") {
		part = strings.TrimSpace(strings.ToLower(part))
		if part == "no-cache" || part == "no-store" {
			return -1
		}
		if v, ok := strings.CutPrefix(part, "max-age="); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// readCache returns the cached registry for s's URL, if any.
func (s *Source) readCache() (*Registry, cacheMeta, error) {
	var m cacheMeta
	if s.CacheDir == "" {
		return nil, m, os.ErrNotExist
	}
	mb, err := readRegular(filepath.Join(s.CacheDir, metaFile), ownFileMax)
	if err != nil {
		return nil, m, err
	}
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, m, fmt.Errorf("registry cache %s: %w", metaFile, err)
	}
	if m.URL != s.url() {
		return nil, m, os.ErrNotExist // another registry's copy
	}
	// What a fetch accepted, under whatever MaxSize was then.
	data, err := readRegular(filepath.Join(s.CacheDir, cacheFile), max(s.MaxSize, DefaultMaxSize))
	if err != nil {
		return nil, m, err
	}
	reg, err := Decode(data)
	if err != nil {
		return nil, m, fmt.Errorf("registry cache: %w", err)
	}
	return reg, m, nil
}

func (s *Source) writeCache(data []byte, m cacheMeta) error {
	if s.CacheDir == "" {
		return nil
	}
	if err := os.MkdirAll(s.CacheDir, 0o755); err != nil {
		return fmt.Errorf("registry cache: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(s.CacheDir, cacheFile), data, 0o644); err != nil {
		return err
	}
	return s.writeMeta(m)
}

func (s *Source) writeMeta(m cacheMeta) error {
	if s.CacheDir == "" {
		return nil
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(s.CacheDir, metaFile), b, 0o644)
}
