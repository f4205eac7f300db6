package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory"
)

// SessionStore is the web dashboard's sign-ins under way and signed-in browsers.
type SessionStore interface {
	StartLogin(ctx context.Context, l memory.WebLogin, ttl time.Duration) error
	TakeLogin(ctx context.Context, stateHash, browserHash string) (memory.WebLogin, error)
	Create(ctx context.Context, ws memory.WebSession, ttl time.Duration) (memory.WebSession, error)
	Lookup(ctx context.Context, tokenHash string) (memory.WebSession, error)
	Touch(ctx context.Context, tokenHash string) error
	Revoke(ctx context.Context, tokenHash string) error
	RevokeUser(ctx context.Context, userID string) (int, error)
	SetMemberships(ctx context.Context, tokenHash string, ms []memory.WebMembership) error
}

// sessionsOf returns the store's sessions, or skips the case for a store without them.
func sessionsOf(t *testing.T, s Stores) SessionStore {
	t.Helper()
	if s.Sessions == nil {
		t.Skip("the store keeps no web sessions")
	}
	return s.Sessions
}

// testWebLogins: a sign-in is taken once, only by the browser that started it (another
// browser's attempt spends it) and only before it expires; bad input is refused.
func testWebLogins(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ss := sessionsOf(t, s)
	ctx := t.Context()
	start := func(state string) {
		t.Helper()
		if err := ss.StartLogin(ctx, memory.WebLogin{StateHash: state, BrowserHash: "browser-" + state, Verifier: "verifier-" + state}, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	start("s1")
	l, err := ss.TakeLogin(ctx, "s1", "browser-s1")
	if err != nil || l.Verifier != "verifier-s1" || !l.ExpiresAt.Equal(s.Clock.Now().Add(10*time.Minute)) {
		t.Fatalf("take: %+v %v", l, err)
	}
	t.Run("ErrTakenTwice", func(t *testing.T) {
		_, err := ss.TakeLogin(ctx, "s1", "browser-s1")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrUnknownState", func(t *testing.T) {
		_, err := ss.TakeLogin(ctx, "never-started", "browser-s1")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrOtherBrowserSpendsIt", func(t *testing.T) {
		start("s2")
		_, err := ss.TakeLogin(ctx, "s2", "browser-of-someone-else")
		wantCode(t, err, memory.ENOTFOUND)
		_, err = ss.TakeLogin(ctx, "s2", "browser-s2")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrExpired", func(t *testing.T) {
		start("s3")
		s.Clock.Advance(10*time.Minute + time.Millisecond)
		_, err := ss.TakeLogin(ctx, "s3", "browser-s3")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrIncomplete", func(t *testing.T) {
		err := ss.StartLogin(ctx, memory.WebLogin{StateHash: "s4", BrowserHash: "b"}, time.Minute)
		wantCode(t, err, memory.EINVALID)
	})
}

// testWebSessions: a session reads back with its member, servers and CSRF secret until it
// expires or is revoked; revoking a member's sessions leaves others'; touching moves its
// last-seen time; forget-me signs the member out everywhere and nobody else.
func testWebSessions(t *testing.T, open func(*testing.T) Stores) {
	s := open(t)
	ss := sessionsOf(t, s)
	ctx := t.Context()
	const alice, bob = "100000000000000001", "200000000000000002"
	create := func(token, user string, guilds ...string) memory.WebSession {
		t.Helper()
		ws, err := ss.Create(ctx, memory.WebSession{TokenHash: token, UserID: user, GuildIDs: guilds, CSRF: "csrf-" + token}, 7*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	created := create("a1", alice, "g1", "g2")
	got, err := ss.Lookup(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if got.UserID != alice || got.CSRF != "csrf-a1" || !slices.Equal(got.GuildIDs, []string{"g1", "g2"}) ||
		!got.CreatedAt.Equal(s.Clock.Now()) || !got.ExpiresAt.Equal(created.ExpiresAt) ||
		!got.ExpiresAt.Equal(s.Clock.Now().Add(7*24*time.Hour)) {
		t.Fatalf("lookup = %+v, created %+v", got, created)
	}
	t.Run("TouchMovesLastSeen", func(t *testing.T) {
		s.Clock.Advance(time.Hour)
		if err := ss.Touch(ctx, "a1"); err != nil {
			t.Fatal(err)
		}
		got, err := ss.Lookup(ctx, "a1")
		if err != nil || !got.LastSeenAt.Equal(s.Clock.Now()) || got.CreatedAt.Equal(got.LastSeenAt) {
			t.Fatalf("after touch: %+v %v", got, err)
		}
	})
	t.Run("Memberships", func(t *testing.T) {
		if !got.CheckedAt.IsZero() || len(got.Memberships) != 0 {
			t.Fatalf("a session made without memberships: %+v", got)
		}
		s.Clock.Advance(time.Minute)
		ms := []memory.WebMembership{{GuildID: "g1", Name: "Home", Member: true, Roles: []string{"r1"}}, {GuildID: "g2"}}
		if err := ss.SetMemberships(ctx, "a1", ms); err != nil {
			t.Fatal(err)
		}
		back, err := ss.Lookup(ctx, "a1")
		if err != nil || !back.CheckedAt.Equal(s.Clock.Now()) || len(back.Memberships) != 2 {
			t.Fatalf("after setting memberships: %+v %v", back, err)
		}
		if m, ok := back.Membership("g1"); !ok || m.Name != "Home" || !slices.Equal(m.Roles, []string{"r1"}) {
			t.Errorf("membership of g1: %+v %v", m, ok)
		}
		if _, ok := back.Membership("g2"); ok {
			t.Error("g2 reads as a membership though Discord did not confirm it")
		}
		if err := ss.SetMemberships(ctx, "never-issued", ms); err != nil {
			t.Errorf("setting the memberships of a session that is gone: %v", err)
		}
	})
	t.Run("ErrUnknownToken", func(t *testing.T) {
		_, err := ss.Lookup(ctx, "never-issued")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("ErrRevoked", func(t *testing.T) {
		create("a2", alice)
		if err := ss.Revoke(ctx, "a2"); err != nil {
			t.Fatal(err)
		}
		_, err := ss.Lookup(ctx, "a2")
		wantCode(t, err, memory.ENOTFOUND)
		if err := ss.Revoke(ctx, "a2"); err != nil {
			t.Errorf("revoking a revoked session: %v", err)
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		short, err := ss.Create(ctx, memory.WebSession{TokenHash: "a3", UserID: alice, CSRF: "c"}, time.Minute)
		if err != nil || short.GuildIDs == nil {
			t.Fatalf("create: %+v %v", short, err)
		}
		s.Clock.Advance(time.Minute)
		_, err = ss.Lookup(ctx, "a3")
		wantCode(t, err, memory.ENOTFOUND)
	})
	t.Run("RevokeUserLeavesOthers", func(t *testing.T) {
		create("a4", alice)
		create("b1", bob)
		n, err := ss.RevokeUser(ctx, alice)
		if err != nil || n != 2 { // a1 and a4; a3 expired and was deleted by the next create
			t.Fatalf("revoke user: %d %v", n, err)
		}
		for _, token := range []string{"a1", "a4"} {
			_, err := ss.Lookup(ctx, token)
			wantCode(t, err, memory.ENOTFOUND)
		}
		if got, err := ss.Lookup(ctx, "b1"); err != nil || got.UserID != bob {
			t.Fatalf("Bob's session: %+v %v", got, err)
		}
	})
	t.Run("ForgetMeSignsTheMemberOut", func(t *testing.T) {
		create("a5", alice, "g1")
		preview, err := s.ForgetMe.PreviewForgetMe(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ForgetMe.ConfirmForgetMe(ctx, alice, preview.Token); err != nil {
			t.Fatal(err)
		}
		_, err = ss.Lookup(ctx, "a5")
		wantCode(t, err, memory.ENOTFOUND)
		if got, err := ss.Lookup(ctx, "b1"); err != nil || got.UserID != bob {
			t.Fatalf("Bob's session after Alice's forget-me: %+v %v", got, err)
		}
	})
	t.Run("ErrIncomplete", func(t *testing.T) {
		_, err := ss.Create(ctx, memory.WebSession{TokenHash: "x", UserID: alice}, time.Hour)
		wantCode(t, err, memory.EINVALID)
	})
}
