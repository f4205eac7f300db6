package main

// What `kioku run` says when it cannot connect to Discord: whether the network, the token,
// the application's settings or Discord itself is the problem, and what to check. The first
// start is where most setups fail, and a bare "dial tcp …" or "websocket: close 4004" says
// nothing about what to do next.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/kioku-bot/kioku/bot"
)

// gatewayError is a failed connection to Discord with what failed and what to check.
type gatewayError struct {
	// shard names the shard when the process runs one of several ("shard 1 of 2"), else "".
	shard string
	// cause says what is wrong, in a few words; check says what to do about it.
	cause, check string
	err          error
}

func (e *gatewayError) Error() string {
	if e.cause == "" { // not explained yet: only the shard is known
		return fmt.Sprintf("%s: %v", e.shard, e.err)
	}
	where := "Discord"
	if e.shard != "" {
		where += " (" + e.shard + ")"
	}
	return fmt.Sprintf("couldn't connect to %s: %s (%v). %s", where, e.cause, e.err, e.check)
}

func (e *gatewayError) Unwrap() error { return e.err }

// explainGatewayError turns an error of opening a gateway session into a gatewayError;
// apiURL is KIOKU_DISCORD_API_URL, named when the network fails on the way to it.
func explainGatewayError(err error, apiURL string) error {
	if err == nil {
		return nil
	}
	e := &gatewayError{err: err}
	if ge, ok := errors.AsType[*gatewayError](err); ok {
		if ge.cause != "" {
			return err
		}
		e.shard, e.err = ge.shard, ge.err
	}
	err = e.err
	// The bot's own "couldn't connect to the discord gateway" says what the explanation
	// says again.
	if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "couldn't connect to the discord gateway") {
		e.err = inner
	}
	e.cause, e.check = classifyGatewayError(err, apiURL)
	return e
}

// classifyGatewayError says which party failed and what to check.
func classifyGatewayError(err error, apiURL string) (cause, check string) {
	const tokenCheck = "Check KIOKU_DISCORD_TOKEN: copy the bot token again from the Discord Developer Portal " +
		"(your application → Bot → Reset Token); it is the bot's token, not the application id, public key or client secret"
	discordDown := "This is Discord's side, not your setup: see https://discordstatus.com and start again in a few minutes"
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil {
		switch code := rest.Response.StatusCode; {
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			return fmt.Sprintf("Discord refused the bot token (HTTP %d)", code), tokenCheck
		case code == http.StatusTooManyRequests:
			return "Discord is rate-limiting this bot (HTTP 429)",
				"Too many starts in a short time, or another process uses the same token: wait a few minutes before starting again"
		case code >= 500:
			return fmt.Sprintf("Discord answered with a server error (HTTP %d)", code), discordDown
		default:
			return fmt.Sprintf("Discord's API answered HTTP %d", code),
				"Check KIOKU_DISCORD_API_URL (" + apiURLName(apiURL) + "): it must be Discord's API root, https://discord.com/"
		}
	}
	var closed *websocket.CloseError
	if errors.As(err, &closed) {
		return classifyGatewayClose(closed.Code, tokenCheck, discordDown)
	}
	if cause, check, ok := classifyNetworkError(err, apiURL); ok {
		return cause, check
	}
	return "an unexpected error", "Check KIOKU_DISCORD_TOKEN and this machine's network; `kioku doctor` checks the rest of the setup"
}

// classifyGatewayClose explains the close code the gateway ended the session with
// (Discord's gateway close event codes).
func classifyGatewayClose(code int, tokenCheck, discordDown string) (cause, check string) {
	switch code {
	case 4004:
		return "the gateway refused the bot token (close 4004, authentication failed)", tokenCheck
	case 4013, 4014:
		return fmt.Sprintf("the gateway refused kioku's intents (close %d)", code),
			"Turn on Message Content Intent in the Discord Developer Portal (your application → Bot → Privileged Gateway Intents), then start again"
	case 4011:
		return "Discord requires this bot to run shards (close 4011)",
			"Set KIOKU_SHARDS=auto, or KIOKU_SHARD_ID and KIOKU_SHARD_COUNT per process (README, Scaling out)"
	case 4010:
		return "the gateway refused the shard (close 4010, invalid shard)",
			"KIOKU_SHARD_ID must be below KIOKU_SHARD_COUNT, and every process must give the same count"
	case 4008:
		return "the gateway is rate-limiting this bot (close 4008)", "Wait a minute before starting again"
	}
	return fmt.Sprintf("the gateway closed the session (close %d)", code), discordDown
}

// classifyNetworkError recognises failures to reach the API at all: name resolution,
// refused or timed-out connections, TLS.
func classifyNetworkError(err error, apiURL string) (cause, check string, ok bool) {
	reach := "Check that this machine reaches " + apiURLName(apiURL) + " over HTTPS (port 443): its internet connection, DNS, " +
		"firewall and proxy (HTTPS_PROXY is honoured)"
	if apiURL != "" && strings.TrimSuffix(apiURL, "/") != strings.TrimSuffix(bot.DefaultAPIURL, "/") {
		reach += ", and KIOKU_DISCORD_API_URL"
	}
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var certInvalid *tls.CertificateVerificationError
	var netErr net.Error
	var urlErr *url.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &dns):
		return fmt.Sprintf("a network problem: the name %s could not be resolved", dns.Name), reach, true
	case errors.As(err, &unknownCA), errors.As(err, &certInvalid):
		return "a network problem: Discord's TLS certificate could not be verified",
			"A proxy that intercepts TLS, or missing CA certificates on this machine, does this: install the CA certificates or use a proxy that does not intercept", true
	case errors.As(err, &netErr) && netErr.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return "a network problem: the connection timed out", reach, true
	case errors.As(err, &opErr), errors.As(err, &urlErr):
		return "a network problem", reach, true
	}
	return "", "", false
}

// apiURLName is the API host people should be able to reach.
func apiURLName(apiURL string) string {
	if apiURL == "" {
		apiURL = bot.DefaultAPIURL
	}
	if u, err := url.Parse(apiURL); err == nil && u.Host != "" {
		return u.Host
	}
	return apiURL
}
