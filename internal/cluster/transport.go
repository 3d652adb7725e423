package cluster

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// DefaultMaxResponseBytes is the most bytes flipflop reads of one response of
// the API server when Options.MaxResponseBytes is 0: 64 MiB, counted after
// decompression. A list page of DefaultChunkSize objects of up to 130 KB each
// fits; a longer response is refused and reported as a load error (a smaller
// ChunkSize reads the same objects in smaller pages).
const DefaultMaxResponseBytes = 64 << 20

func (o Options) maxResponseBytes() int64 {
	if o.MaxResponseBytes > 0 {
		return o.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

// Guard returns a copy of cfg whose requests go through the guard Read's go
// through: no redirect to another origin is followed, and every response body
// is bounded to maxBytes after decompression (0: DefaultMaxResponseBytes).
// For every other client of the cluster flipflop makes (the report writer).
func Guard(cfg *rest.Config, maxBytes int64) *rest.Config {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxResponseBytes
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &guard{next: rt, maxBytes: maxBytes} })
	return cfg
}

// guard is the round tripper Read puts under client-go's own (authentication,
// user agent), right above the HTTP transport: it refuses redirects to another
// origin, and bounds every response body.
//
// client-go sets no redirect policy, so its http.Client follows up to 10
// redirects; net/http drops the Authorization header it copies to a redirect
// to another domain, but client-go adds the bearer token (or the exec
// plugin's) in a round tripper, to every request, redirected or not, and the
// transport presents the client certificate to whatever host asks. The guard
// sees the redirected request after those layers and before the network.
type guard struct {
	next     http.RoundTripper
	maxBytes int64
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Response != nil { // a redirect net/http is following
		first := req
		for first.Response != nil && first.Response.Request != nil {
			first = first.Response.Request
		}
		if from, to := origin(first.URL), origin(req.URL); from != to {
			return nil, &RedirectError{From: from, To: to}
		}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &boundedBody{body: resp.Body, left: g.maxBytes, max: g.maxBytes}
	if resp.ContentLength > g.maxBytes {
		// Announced too large, and not compressed (Go's transport sets -1
		// when it decompresses): refuse without reading it.
		resp.Body.(*boundedBody).left = -1
	}
	return resp, nil
}

// boundedBody is a response body that fails once more than max bytes were
// read from it. The bytes are those the decoder gets: Go's transport has
// already decompressed a gzip body it asked for (Accept-Encoding, which it
// adds itself unless rest.Config.DisableCompression), so a small compressed
// body that inflates to gigabytes stops at max; a compressed body nobody
// asked for is passed on compressed, and counted as such.
type boundedBody struct {
	body io.ReadCloser
	left int64 // bytes that may still be read; < 0 once the bound is passed
	max  int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, &ResponseTooLargeError{Max: b.max}
	}
	// Read at most one byte past the bound: enough to tell that there is more.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n - 1, &ResponseTooLargeError{Max: b.max}
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.body.Close() }

// ResponseTooLargeError reports a response of the API server longer than
// Options.MaxResponseBytes, after decompression.
type ResponseTooLargeError struct {
	// Max is the bound, in bytes.
	Max int64
}

func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("the API server's response was longer than %s (after decompression), the most flipflop reads of one response", byteSize(e.Max))
}

// RedirectError reports a redirect away from the API server, which flipflop
// does not follow: the credentials would go along.
type RedirectError struct {
	// From and To are the origins (scheme://host:port) of the API server and
	// of the redirect's target.
	From, To string
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("the API server redirected to %s, another origin than %s: flipflop does not follow it (client-go would send the credentials along)", e.To, e.From)
}

// origin is scheme://host:port of u, lower-cased, with the scheme's default
// port when u names none.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// byteSize writes n bytes as people read them: "64 MiB", "1500 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
