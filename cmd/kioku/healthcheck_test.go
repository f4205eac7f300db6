package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthcheck: `kioku healthcheck` exits 0 when /healthz answers 200 and 1 with one
// line saying why when it answers otherwise, when nothing listens, or when the endpoint
// is turned off. A wildcard KIOKU_HTTP_ADDR (as inside a container) is asked on loopback.
func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte("{\"gateway\":\"disconnected\",\n\"status\":\"unhealthy\"}\n"))
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)

	t.Run("Healthy", func(t *testing.T) {
		for _, a := range []string{addr, "0.0.0.0:" + port, ":" + port} {
			code, out, errOut := runApp(t, map[string]string{"KIOKU_HTTP_ADDR": a}, "", "healthcheck")
			if code != 0 || !strings.Contains(out, "200") || errOut != "" {
				t.Errorf("KIOKU_HTTP_ADDR=%s: exit %d, stdout %q, stderr %q; want 0 and the 200", a, code, out, errOut)
			}
		}
	})
	t.Run("Unhealthy", func(t *testing.T) {
		status = http.StatusServiceUnavailable
		defer func() { status = http.StatusOK }()
		code, _, errOut := runApp(t, map[string]string{"KIOKU_HTTP_ADDR": addr}, "", "healthcheck")
		if code != 1 || !strings.Contains(errOut, "503") || !strings.Contains(errOut, `"gateway":"disconnected"`) ||
			strings.Count(errOut, "\n") != 1 {
			t.Fatalf("503: exit %d, stderr %q; want 1 and one line with the status and the answer", code, errOut)
		}
	})
	t.Run("NothingListening", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		ln.Close()
		code, _, errOut := runApp(t, map[string]string{"KIOKU_HTTP_ADDR": closed}, "", "healthcheck")
		if code != 1 || !strings.Contains(errOut, "couldn't reach http://"+closed+"/healthz") || strings.Count(errOut, "\n") != 1 {
			t.Fatalf("nothing listening: exit %d, stderr %q; want 1 and one line saying it couldn't reach it", code, errOut)
		}
	})
	t.Run("EndpointOff", func(t *testing.T) {
		code, _, errOut := runApp(t, map[string]string{"KIOKU_HTTP_ADDR": ""}, "", "healthcheck")
		if code != 1 || !strings.Contains(errOut, "KIOKU_HTTP_ADDR is empty") {
			t.Fatalf("endpoint off: exit %d, stderr %q", code, errOut)
		}
	})
}
