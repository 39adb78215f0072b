// Package transport connects the host to agents wherever they run. Each
// kind of connection is a pair of message streams presented as a Conn the
// host's gate and acp-go-sdk connection sit on, whatever carries the
// messages:
//
//	process.go    a local process's stdio (NDJSON, or Content-Length framing)
//	websocket.go  ACP over WebSocket (the /acp endpoint of the transport RFD)
//	sse.go        elephant.ai's pair: POST /acp/rpc, GET /acp/sse
//	http.go       streamable HTTP: ZeptoClaw's POST /acp, the RFD's POST+GET
//
// Inbound, a Conn reads as newline-delimited JSON: one JSON-RPC message per
// line, whatever the framing on the wire. Outbound, it takes the same: each
// message ends with a newline and may span several Writes.
package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"
)

// Conn is a connection to an agent as a pair of message streams.
type Conn interface {
	// Read reads inbound messages, each one JSON-RPC message on its own
	// line; io.EOF once the connection has ended and every message received
	// before was read.
	io.Reader
	// Write takes outbound messages, each ending with a newline; a message
	// may span several Writes. It fails once the connection has ended.
	io.Writer
	// Close ends the connection (a process: its stdin closed, then
	// signals). Done is closed when it has ended.
	Close() error
	// Done is closed when the connection has ended, by Close or not.
	Done() <-chan struct{}
	// Err says why the connection ended (nil before Done is closed).
	Err() error
}

// Kind is how an agent is reached.
type Kind string

// KindOf is the kind of connection c is ("" when it does not say).
func KindOf(c Conn) Kind {
	if k, ok := c.(interface{ Kind() Kind }); ok {
		return k.Kind()
	}
	return ""
}

// The kinds of connection.
const (
	Stdio     Kind = "stdio"     // a local process (process.go)
	WebSocket Kind = "websocket" // websocket.go
	SSE       Kind = "sse"       // elephant.ai's POST+SSE pair (sse.go)
	HTTP      Kind = "http"      // streamable HTTP (http.go)
)

// MaxMessage is the default bound of one inbound message: the host drops
// longer lines before acp-go-sdk sees them (its scanner stops at 10 MiB).
const MaxMessage = 8 << 20

// Remote says how to reach an agent server.
type Remote struct {
	URL string
	// Kind: SSE, HTTP or WebSocket; "" detects it: ws:// and wss:// are
	// WebSocket, an http(s) URL is probed (Detect).
	Kind Kind
	// Header is sent with every request (secrets: never logged).
	Header http.Header
	// AllowInsecure allows plain http:// and ws:// to a host that is not
	// loopback.
	AllowInsecure bool
	// MaxMessage bounds one inbound message (default MaxMessage); a longer
	// one is dropped and reported.
	MaxMessage int
	// Report tells the user about a problem the connection survives (an
	// event dropped); called on the connection's goroutines, must not block.
	Report func(msg string)
	// Client makes the HTTP requests (tests); nil: one verifying TLS with
	// the system's roots.
	Client *http.Client
	Log    *slog.Logger
}

// ErrUnauthorized marks a server's refusal of the credentials sent (HTTP
// 401 or 403).
var ErrUnauthorized = errors.New("the server refused the credentials")

// ErrUntrusted marks a server whose TLS certificate does not verify
// against the system's roots (or does not name the host).
var ErrUntrusted = errors.New("the server's certificate is not trusted")

// Dial connects to the agent server r names.
func Dial(ctx context.Context, r Remote) (Conn, error) {
	u, err := r.endpoint()
	if err != nil {
		return nil, err
	}
	if r.Client == nil {
		// Cookies are kept for the connection (the ACP RFD asks clients to:
		// servers behind load balancers use them for sticky sessions) and
		// dropped with it.
		jar, _ := cookiejar.New(nil)
		r.Client = &http.Client{Transport: defaultTransport, Jar: jar}
	}
	// Redirects stay within the configured origin: the headers (an API
	// key) never go elsewhere, nor anything in plain text without
	// allow_insecure (net/http sends custom headers to any host).
	r.Client = sameOrigin(r.Client, u)
	kind := r.Kind
	if kind == "" && (u.Scheme == "ws" || u.Scheme == "wss") {
		kind = WebSocket
	}
	switch kind {
	case WebSocket:
		return dialWebSocket(ctx, r, u)
	case SSE:
		return dialSSE(ctx, r, u, nil)
	case HTTP:
		return dialHTTP(ctx, r, u), nil
	case "":
		return detect(ctx, r, u)
	}
	return nil, fmt.Errorf("transport %q: want \"sse\", \"http\" or \"websocket\"", kind)
}

// detect finds what an http(s) URL serves by trying, in order: a WebSocket
// upgrade (the ACP RFD's servers may serve only that), elephant's event
// stream at <url>/sse, and else streamable HTTP. The first that answers is
// the connection; credentials refused or a certificate not trusted end the
// probing (no other transport would fare better), as does a redirect to
// another origin.
func detect(ctx context.Context, r Remote, u *url.URL) (Conn, error) {
	c, err := dialWebSocket(ctx, r, u)
	if err == nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrUntrusted) || errors.Is(err, ErrRedirected) || ctx.Err() != nil {
		return c, err
	}
	r.log().Debug("no WebSocket at the agent's URL", "url", Redact(u), "err", err)
	var probe sseProbe
	c, err = dialSSE(ctx, r, u, &probe)
	if err == nil || errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrUntrusted) || errors.Is(err, ErrRedirected) || ctx.Err() != nil || probe.served {
		return c, err
	}
	r.log().Debug("no event stream at the agent's URL", "url", Redact(u), "err", err)
	return dialHTTP(ctx, r, u), nil
}

// endpoint parses and checks r.URL: http(s) or ws(s), with a host; a path
// left empty is /acp; plain text to a host that is not loopback needs
// AllowInsecure.
func (r Remote) endpoint() (*url.URL, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil, fmt.Errorf("agent url: %w", err)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, fmt.Errorf("agent url %s: want http://, https://, ws:// or wss://", Redact(u))
	}
	if u.Host == "" {
		return nil, fmt.Errorf("agent url %s: no host", Redact(u))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/acp"
	}
	if Insecure(u) && !r.AllowInsecure {
		return nil, fmt.Errorf("agent url %s is not encrypted and not on this machine: use https:// or wss://, "+
			"or set allow_insecure = true to send everything (prompts, files, credentials) in the clear", Redact(u))
	}
	return u, nil
}

// Insecure reports whether u is plain text (http, ws) to a host that is not
// loopback.
func Insecure(u *url.URL) bool {
	if u.Scheme != "http" && u.Scheme != "ws" {
		return false
	}
	return !Loopback(u.Hostname())
}

// Loopback reports whether host is this machine: localhost or a loopback
// address.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Redact is u as it may be shown and logged: no user info, no query (a
// token may be there), no fragment.
func Redact(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	c.RawQuery = ""
	c.Fragment = ""
	return c.String()
}

// RedactURL is Redact of the URL s ("" when s does not parse).
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return Redact(u)
}

func (r Remote) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return discard
}

func (r Remote) maxMessage() int {
	if r.MaxMessage > 0 {
		return r.MaxMessage
	}
	return MaxMessage
}

func (r Remote) report(msg string) {
	if r.Report != nil {
		r.Report(msg)
	}
}

// client is the connection's HTTP client (Dial gives each its own, over
// defaultTransport).
func (r Remote) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return &http.Client{Transport: defaultTransport}
}

// discard is a logger that logs nothing.
var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// defaultTransport verifies TLS with the system's roots; it has no overall
// timeout (event streams last), a bounded dial and TLS handshake.
var defaultTransport = &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	ForceAttemptHTTP2:     true,
	TLSHandshakeTimeout:   15 * time.Second,
	ResponseHeaderTimeout: 0,
	IdleConnTimeout:       90 * time.Second,
	MaxIdleConnsPerHost:   8,
}

// header returns a copy of r.Header with extra set.
func (r Remote) header(extra ...string) http.Header {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

// statusError describes an HTTP answer that is not what was wanted; 401
// and 403 wrap ErrUnauthorized.
func statusError(what string, u *url.URL, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg != "" {
		msg = ": " + msg
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return fmt.Errorf("%s %s: %s%s: %w (set the agent's token or headers)", what, Redact(u), resp.Status, msg, ErrUnauthorized)
	}
	return fmt.Errorf("%s %s: %s%s", what, Redact(u), resp.Status, msg)
}

// requestError describes a failed HTTP request without its URL's secrets
// (url.Error would print the query).
func requestError(what string, u *url.URL, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if untrusted(err) {
		return fmt.Errorf("%s %s: %w: %v (TLS is verified with the system's roots: "+
			"add the server's CA to them, or name a file of it in $SSL_CERT_FILE)", what, Redact(u), ErrUntrusted, err)
	}
	return fmt.Errorf("%s %s: %w", what, Redact(u), err)
}

// untrusted reports whether err is a failed verification of a server's
// certificate.
func untrusted(err error) bool {
	var ve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &ve) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}
