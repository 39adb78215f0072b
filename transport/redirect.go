package transport

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrRedirected marks a redirect to another origin than the agent's
// configured URL, which is not followed: the agent's headers (an API key)
// and cookies are sent to that origin only, and plain text to another host
// would need allow_insecure.
var ErrRedirected = errors.New("redirected to another origin")

// maxRedirects bounds the redirects followed within the origin (as
// net/http's default policy does).
const maxRedirects = 10

// sameOrigin returns c with a redirect policy that follows redirects within
// u's origin (scheme, host and port; ws and wss count as http and https)
// only, and refuses any other with ErrRedirected.
func sameOrigin(c *http.Client, u *url.URL) *http.Client {
	cc := *c
	want := origin(u)
	cc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if got := origin(req.URL); got != want {
			return fmt.Errorf("the agent server %s answered with a redirect to %s: %w, not followed "+
				"(the agent's headers and credentials are sent to %s only); if you trust it, set the agent's url to the new address",
				Redact(u), Redact(req.URL), ErrRedirected, want)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("the agent server %s: stopped after %d redirects", Redact(u), maxRedirects)
		}
		return nil
	}
	return &cc
}

// origin is u's scheme://host:port, lower case, with the scheme's default
// port made explicit and WebSocket schemes as their HTTP ones.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "ws":
		scheme = "http"
	case "wss":
		scheme = "https"
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
