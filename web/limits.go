package web

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/kioku-bot/kioku/keyrate"
)

// limiter is a request rate limit per key (a client address, a session), read at the
// dashboard's clock. Each process keeps its own; with several processes behind one proxy the
// limit is per process.
type limiter struct {
	keys *keyrate.Limiter
	now  func() time.Time
}

func newLimiter(perMinute int, now func() time.Time) *limiter {
	return &limiter{keys: keyrate.New(perMinute), now: now}
}

// allow takes one request from key's bucket; when it is empty it reports false and about
// how long until the next request is allowed.
func (l *limiter) allow(key string) (time.Duration, bool) {
	_, wait, ok := l.keys.Take(key, l.now())
	return wait, ok
}

// gate is what every request passes first: the rate limits, per client address (here) and
// per session (signIn.signedIn), and who the client is behind trusted proxies.
type gate struct {
	byAddress, bySession *limiter
	proxies              []netip.Prefix
	view                 *views
}

// limitAddress answers 429 to a client address past its rate. The stylesheet is not
// counted: a page and its stylesheet are one visit.
func (g *gate) limitAddress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			if wait, ok := g.byAddress.allow(g.clientAddr(r).String()); !ok {
				g.view.tooMany(w, r, wait)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// tooMany answers 429 with when to try again.
func (vw *views) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(wait.Seconds()+0.5))))
	vw.message(w, r, nil, http.StatusTooManyRequests, "web.error.too_many", "")
}

// clientAddr is the address of the client: the connection's peer, or, when the peer is a
// trusted proxy, the nearest address in X-Forwarded-For that is not a trusted proxy (each
// proxy appends the address it received from, so the entries left of the last untrusted
// one could be anything the client wrote). An address that does not parse counts as the
// peer, so a malformed header cannot make every request a new client.
func (g *gate) clientAddr(r *http.Request) netip.Addr {
	peer := peerAddr(r)
	if !g.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return peer
		}
		hop = hop.Unmap()
		if !g.trusted(hop) {
			return hop
		}
		peer = hop
	}
	return peer
}

func (g *gate) trusted(a netip.Addr) bool {
	for _, p := range g.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the connection's remote address; the zero address when it does not parse.
func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}
