package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// startFailing runs `kioku run` with env until it gives up, bounded, and returns its exit
// code and stderr.
func startFailing(t *testing.T, env map[string]string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	app := &App{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := app.Main(ctx, []string{"run"})
	if ctx.Err() != nil {
		t.Fatalf("kioku run was still running after a minute; it should have failed to connect:\n%s", stderr.String())
	}
	return code, stderr.String()
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestRunExplainsGatewayFailures: when `kioku run` cannot connect to Discord, its one error
// line says whether the network, the token, the application's intents or Discord is the
// problem and what to check, and names the shard only when the process runs one of several.
func TestRunExplainsGatewayFailures(t *testing.T) {
	cases := []struct {
		name  string
		setup func(f *fakediscord.Fake, env map[string]string)
		want  []string
	}{
		{"network", func(_ *fakediscord.Fake, env map[string]string) {
			env["KIOKU_DISCORD_API_URL"] = "http://" + closedPort(t) + "/"
		}, []string{"couldn't connect to Discord: a network problem", "connection refused", "over HTTPS", "KIOKU_DISCORD_API_URL"}},
		{"token refused by the API", func(f *fakediscord.Fake, _ map[string]string) {
			f.FailNext(1, fakediscord.Match("GET", "/gateway"), 401, 0, "401: Unauthorized")
		}, []string{"Discord refused the bot token (HTTP 401)", "KIOKU_DISCORD_TOKEN", "Reset Token"}},
		{"token refused by the gateway", func(f *fakediscord.Fake, _ map[string]string) {
			f.RejectIdentify(4004)
		}, []string{"the gateway refused the bot token (close 4004", "KIOKU_DISCORD_TOKEN"}},
		{"message content intent off", func(f *fakediscord.Fake, _ map[string]string) {
			f.RejectIdentify(4014)
		}, []string{"refused kioku's intents (close 4014)", "Message Content Intent", "Privileged Gateway Intents"}},
		{"discord down", func(f *fakediscord.Fake, _ map[string]string) {
			f.FailNext(1, fakediscord.Match("GET", "/gateway"), 503, 0, "Service Unavailable")
		}, []string{"Discord answered with a server error (HTTP 503)", "discordstatus.com"}},
		{"one shard of two", func(f *fakediscord.Fake, env map[string]string) {
			env["KIOKU_SHARD_ID"], env["KIOKU_SHARD_COUNT"] = "1", "2"
			f.RejectIdentify(4004)
		}, []string{"couldn't connect to Discord (shard 1 of 2): the gateway refused the bot token"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := fakediscord.New(t, fakediscord.AllowUnhandled())
			ai := fakeopenai.New(t)
			env := map[string]string{"KIOKU_DISCORD_TOKEN": "fake-discord-token", "KIOKU_DISCORD_API_URL": fake.URL(),
				"KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_DB": filepath.Join(t.TempDir(), "k.db"), "KIOKU_HTTP_ADDR": ""}
			c.setup(fake, env)
			code, stderr := startFailing(t, env)
			if code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, stderr)
			}
			last := strings.TrimSpace(stderr[strings.LastIndex(strings.TrimSpace(stderr), "\n")+1:])
			mustContain(t, "the error line", last, c.want...)
			if env["KIOKU_SHARD_COUNT"] == "" {
				mustNotContain(t, "the error line of a bot without shards", last, "shard 0 of 1", "shard")
			}
		})
	}
}

// TestGatewayNetworkErrors: failures to reach the API at all are the network's, with a word
// on which part (the name, the certificate, a timeout).
func TestGatewayNetworkErrors(t *testing.T) {
	dns := &url.Error{Op: "Get", URL: "https://discord.com/api/v9/gateway",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "discord.com", Err: "no such host", IsNotFound: true}}}
	timeout := &url.Error{Op: "Get", URL: "https://discord.com/api/v9/gateway", Err: context.DeadlineExceeded}
	for err, want := range map[error][]string{
		dns:                         {"a network problem: the name discord.com could not be resolved", "discord.com over HTTPS", "DNS"},
		timeout:                     {"a network problem", "discord.com over HTTPS"},
		errors.New("something odd"): {"an unexpected error", "KIOKU_DISCORD_TOKEN"},
	} {
		got := explainGatewayError(err, "").Error()
		mustContain(t, "explanation", got, want...)
		mustNotContain(t, "explanation of the default API", got, "KIOKU_DISCORD_API_URL")
	}
}
