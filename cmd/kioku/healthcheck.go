package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheckTimeout bounds `kioku healthcheck` as a whole: a container runtime kills a
// probe that hangs, and a bot that needs longer than this to answer is not healthy.
const healthcheckTimeout = 5 * time.Second

// runHealthcheck is `kioku healthcheck`: it asks the running bot's /healthz on
// KIOKU_HTTP_ADDR and exits 0 when it answers 200, 1 with one line saying why otherwise.
// It exists for container HEALTHCHECKs: the image holds only the kioku binary, no curl.
// It touches neither the database nor the network beyond that one request.
func runHealthcheck(ctx context.Context, app *App, args []string) error {
	fs := newFlagSet(app, "healthcheck")
	timeout := fs.Duration("timeout", healthcheckTimeout, "give up after this long")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *timeout <= 0 {
		return usagef("want a positive --timeout, got %s", *timeout)
	}
	url, err := healthURL(app.config.HTTPAddr)
	if err != nil {
		return unhealthy(app, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return unhealthy(app, "couldn't build a request for %s: %v", url, err)
	}
	// No proxy: the probe asks the bot beside it, whatever HTTP_PROXY says.
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return unhealthy(app, "couldn't reach %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return unhealthy(app, "%s answered %s: %s", url, resp.Status, singleLine(string(body)))
	}
	fmt.Fprintf(app.Stdout, "healthy: %s answered %s\n", url, resp.Status)
	return nil
}

// healthURL is the /healthz URL of a bot serving on addr. A wildcard address (0.0.0.0, ::,
// or no host, as in a container) is where the bot listens, not where to connect: the
// probe runs beside it, so it asks the loopback address instead.
func healthURL(addr string) (string, error) {
	if addr == "" {
		return "", fmt.Errorf("KIOKU_HTTP_ADDR is empty, so the bot serves no /healthz to ask")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("invalid KIOKU_HTTP_ADDR %q: %v", addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// unhealthy prints why on one line and makes kioku exit 1.
func unhealthy(app *App, format string, args ...any) error {
	fmt.Fprintf(app.Stderr, "kioku healthcheck: unhealthy: %s\n", singleLine(fmt.Sprintf(format, args...)))
	return errUnhealthy
}

// singleLine folds s onto one line, so a probe's answer stays one line in a health log.
func singleLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
