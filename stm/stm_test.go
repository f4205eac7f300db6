package stm_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kioku-bot/kioku/stm"
)

// start is an arbitrary fixed instant so failures print stable times.
var start = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// fakeClock is a hand-driven clock; it is locked because the concurrency
// test advances it while other goroutines read it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to start+d, so tests read as offsets from the start.
func (c *fakeClock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = start.Add(d)
}

// MustNew returns a store with default options on a fake clock at start.
func MustNew(tb testing.TB, opts stm.Options) (*stm.Store, *fakeClock) {
	tb.Helper()
	clock := &fakeClock{now: start}
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	s, err := stm.New(opts)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s, clock
}

// MustAppend appends a user message with the given content.
func MustAppend(tb testing.TB, s *stm.Store, key stm.Key, content string) {
	tb.Helper()
	msg := stm.Message{AuthorID: key.UserID, AuthorName: "name-" + key.UserID, Role: stm.RoleUser, Content: content}
	if err := s.Append(key, msg); err != nil {
		tb.Fatalf("Append(%v, %q): %v", key, content, err)
	}
}

// MustSetSummary sets a summary and fails the test on error.
func MustSetSummary(tb testing.TB, s *stm.Store, key stm.Key, summary string) {
	tb.Helper()
	if err := s.SetSummary(key, summary); err != nil {
		tb.Fatalf("SetSummary(%v): %v", key, err)
	}
}

// contents lists the message contents of an entry, oldest first.
func contents(msgs []stm.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func TestKey(t *testing.T) {
	tests := []struct {
		name    string
		key     stm.Key
		wantErr bool
	}{
		{"GuildChannelValid", stm.ChannelKey("g1", "c1"), false},
		{"GuildUserValid", stm.UserKey("g1", "c1", "u1"), false},
		{"DMUserValid", stm.UserKey("", "dm1", "u1"), false},
		{"DMChannelInvalid", stm.ChannelKey("", "dm1"), true},
		{"EmptyChannelInvalid", stm.UserKey("g1", "", "u1"), true},
		{"EmptyUserIDInvalid", stm.UserKey("g1", "c1", ""), true},
		{"ZeroInvalid", stm.Key{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.key.Validate()
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("Validate() = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, stm.ErrInvalidKey) {
				t.Fatalf("Validate() = %v, want ErrInvalidKey", err)
			}
		})
	}

	t.Run("EmptyUserIDNeverAddressesSharedEntry", func(t *testing.T) {
		if got := stm.UserKey("g1", "c1", ""); got == stm.ChannelKey("g1", "c1") {
			t.Fatalf("UserKey with empty user = %v, the shared key", got)
		}
	})
	t.Run("String", func(t *testing.T) {
		for key, want := range map[stm.Key]string{
			stm.ChannelKey("g1", "c1"):    "g1/c1/*",
			stm.UserKey("g1", "c1", "u1"): "g1/c1/u1",
			stm.UserKey("", "dm1", "u1"):  "dm/dm1/u1",
		} {
			if got := key.String(); got != want {
				t.Errorf("%#v.String() = %q, want %q", key, got, want)
			}
		}
	})
}

func TestNew(t *testing.T) {
	for name, opts := range map[string]stm.Options{
		"NegativeCapacity":   {Capacity: -1},
		"NegativeMessageTTL": {MessageTTL: -time.Hour},
		"NegativeSummaryTTL": {SummaryTTL: -time.Hour},
	} {
		t.Run("Err"+name, func(t *testing.T) {
			if _, err := stm.New(opts); err == nil {
				t.Fatal("New succeeded, want error")
			}
		})
	}
	t.Run("ZeroOptionsUseDefaults", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustAppend(t, s, key, "hi")
		MustSetSummary(t, s, key, "greeted")
		e, _ := s.Get(key)
		if got, want := e.MessagesExpireAt, clock.Now().Add(stm.DefaultMessageTTL); !got.Equal(want) {
			t.Errorf("MessagesExpireAt = %v, want %v", got, want)
		}
		if got, want := e.SummaryExpiresAt, clock.Now().Add(stm.DefaultSummaryTTL); !got.Equal(want) {
			t.Errorf("SummaryExpiresAt = %v, want %v", got, want)
		}
	})
}

func TestAppend(t *testing.T) {
	t.Run("OldestEvictedBeyondMax", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		key := stm.ChannelKey("g1", "c1")
		var want []string
		for i := range stm.MaxMessages + 3 {
			MustAppend(t, s, key, fmt.Sprint(i))
			want = append(want, fmt.Sprint(i))
		}
		want = want[len(want)-stm.MaxMessages:]
		e, ok := s.Get(key)
		if !ok {
			t.Fatal("Get: entry missing")
		}
		if diff := cmp.Diff(want, contents(e.Messages)); diff != "" {
			t.Fatalf("messages (-want +got):\n%s", diff)
		}
	})

	t.Run("KeepsMessageFields", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		sent := start.Add(-time.Minute)
		msgs := []stm.Message{
			{AuthorID: "u1", AuthorName: "Aiko", Role: stm.RoleUser, Content: "hello", SentAt: sent},
			{AuthorID: "bot", AuthorName: "kioku", Role: stm.RoleAssistant, Content: "hi Aiko"},
		}
		for _, m := range msgs {
			if err := s.Append(key, m); err != nil {
				t.Fatal(err)
			}
		}
		msgs[1].SentAt = clock.Now() // a zero SentAt is filled from the clock
		want := stm.Entry{
			Key:               key,
			Messages:          msgs,
			MessagesUpdatedAt: clock.Now(),
			MessagesExpireAt:  clock.Now().Add(stm.DefaultMessageTTL),
		}
		got, _ := s.Get(key)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("entry (-want +got):\n%s", diff)
		}
	})

	t.Run("LongContentTruncatedOnRuneBoundary", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		key := stm.UserKey("", "dm1", "u1")
		MustAppend(t, s, key, strings.Repeat("記", stm.MaxMessageChars+5))
		e, _ := s.Get(key)
		if want := strings.Repeat("記", stm.MaxMessageChars); e.Messages[0].Content != want {
			t.Fatalf("content has %d bytes, want %d runes of 記", len(e.Messages[0].Content), stm.MaxMessageChars)
		}
	})

	t.Run("ErrInvalidKeyForDMChannel", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		key := stm.ChannelKey("", "dm1")
		err := s.Append(key, stm.Message{AuthorID: "u1", Role: stm.RoleUser, Content: "hi"})
		if !errors.Is(err, stm.ErrInvalidKey) {
			t.Fatalf("Append = %v, want ErrInvalidKey", err)
		}
		if _, ok := s.Get(key); ok {
			t.Fatal("Get found an entry for the DM channel key")
		}
		if err := s.SetSummary(key, "x"); !errors.Is(err, stm.ErrInvalidKey) {
			t.Fatalf("SetSummary = %v, want ErrInvalidKey", err)
		}
	})

	t.Run("ErrInvalidMessageForUnknownRole", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		err := s.Append(key, stm.Message{AuthorID: "u1", Role: "system", Content: "obey"})
		if !errors.Is(err, stm.ErrInvalidMessage) {
			t.Fatalf("Append = %v, want ErrInvalidMessage", err)
		}
		if _, ok := s.Get(key); ok {
			t.Fatal("rejected message created an entry")
		}
	})
}

func TestDM(t *testing.T) {
	s, _ := MustNew(t, stm.Options{})
	dm := stm.UserKey("", "dm1", "u1")
	guild := stm.UserKey("g1", "dm1", "u1") // same IDs in a guild stay apart
	MustAppend(t, s, dm, "private")
	MustSetSummary(t, s, dm, "talked privately")

	t.Run("UserEntryStored", func(t *testing.T) {
		e, ok := s.Get(dm)
		if !ok || e.Summary != "talked privately" || len(e.Messages) != 1 {
			t.Fatalf("Get(dm) = %+v, %v", e, ok)
		}
	})
	t.Run("NotVisibleFromGuild", func(t *testing.T) {
		if e, ok := s.Get(guild); ok {
			t.Fatalf("Get(guild) = %+v, want nothing", e)
		}
	})
	t.Run("ListedForUser", func(t *testing.T) {
		if got := s.ForUser("u1"); len(got) != 1 || got[0].Key != dm {
			t.Fatalf("ForUser = %+v, want the DM entry", got)
		}
	})
	t.Run("ClearedWithChannel", func(t *testing.T) {
		if n := s.ClearChannel("", "dm1"); n != 1 {
			t.Fatalf("ClearChannel = %d, want 1", n)
		}
		if _, ok := s.Get(dm); ok {
			t.Fatal("DM entry survived ClearChannel")
		}
	})
}

func TestSetSummary(t *testing.T) {
	tests := []struct {
		name    string
		summary string
		want    string // stored summary afterwards; "previous" is the one set before
		wantErr error
	}{
		{"AtLimitAccepted", strings.Repeat("a", stm.MaxSummaryChars), strings.Repeat("a", stm.MaxSummaryChars), nil},
		// 1500 runes are 4500 bytes: the limit counts characters.
		{"AtLimitMultibyteAccepted", strings.Repeat("記", stm.MaxSummaryChars), strings.Repeat("記", stm.MaxSummaryChars), nil},
		{"ErrSummaryTooLong", strings.Repeat("a", stm.MaxSummaryChars+1), "previous", stm.ErrSummaryTooLong},
		{"WhitespaceTrimmed", "  talked about cats \n", "talked about cats", nil},
		{"TrimmedBeforeCounting", " " + strings.Repeat("a", stm.MaxSummaryChars) + " ", strings.Repeat("a", stm.MaxSummaryChars), nil},
		{"EmptyClears", "  ", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := MustNew(t, stm.Options{})
			key := stm.UserKey("g1", "c1", "u1")
			MustAppend(t, s, key, "keeps the entry alive")
			MustSetSummary(t, s, key, "previous")

			err := s.SetSummary(key, tt.summary)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("SetSummary = %v, want %v", err, tt.wantErr)
			}
			e, _ := s.Get(key)
			if e.Summary != tt.want {
				t.Fatalf("summary = %.40q (%d chars), want %.40q", e.Summary, len([]rune(e.Summary)), tt.want)
			}
		})
	}

	t.Run("TooLongMessageNamesLengthAndLimit", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		err := s.SetSummary(stm.UserKey("g1", "c1", "u1"), strings.Repeat("a", 1720))
		if want := "summary too long: 1720 characters, the limit is 1500"; err == nil || err.Error() != want {
			t.Fatalf("SetSummary = %v, want %q", err, want)
		}
	})
	t.Run("EmptyOnSummaryOnlyEntryRemovesIt", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustSetSummary(t, s, key, "only a summary")
		MustSetSummary(t, s, key, "")
		if e, ok := s.Get(key); ok {
			t.Fatalf("Get = %+v, want nothing", e)
		}
	})
}

// TestLen: Len counts the entries held, each channel's shared entry and each user's, up
// to the capacity, and drops those a clear removes.
func TestLen(t *testing.T) {
	s, _ := MustNew(t, stm.Options{Capacity: 3})
	if n := s.Len(); n != 0 {
		t.Fatalf("empty store Len = %d", n)
	}
	MustAppend(t, s, stm.ChannelKey("g1", "c1"), "shared")
	MustAppend(t, s, stm.UserKey("g1", "c1", "u1"), "mine")
	if n := s.Len(); n != 2 {
		t.Fatalf("Len = %d after two entries, want 2", n)
	}
	MustAppend(t, s, stm.UserKey("g1", "c2", "u1"), "elsewhere")
	MustAppend(t, s, stm.UserKey("g1", "c3", "u1"), "and more")
	if n := s.Len(); n != 3 {
		t.Fatalf("Len = %d past capacity 3, want 3", n)
	}
	s.ClearUser("u1")
	if n := s.Len(); n != 0 {
		t.Fatalf("Len = %d after clearing the only user, want 0", n)
	}
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		name         string
		at           time.Duration
		wantMessages bool
		wantSummary  bool
	}{
		{"BothPresentAtStart", 0, true, true},
		{"MessagesPresentAt11h59m", 11*time.Hour + 59*time.Minute, true, true},
		{"MessagesGoneAt12h", 12 * time.Hour, false, true},
		{"MessagesGoneAt12h01m", 12*time.Hour + time.Minute, false, true},
		{"SummaryPresentAt23h", 23 * time.Hour, false, true},
		{"SummaryPresentAt23h59m", 23*time.Hour + 59*time.Minute, false, true},
		{"SummaryGoneAt24h", 24 * time.Hour, false, false},
		{"SummaryGoneAt24h01m", 24*time.Hour + time.Minute, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, clock := MustNew(t, stm.Options{})
			key := stm.ChannelKey("g1", "c1")
			MustAppend(t, s, key, "crude")
			MustSetSummary(t, s, key, "summary")

			clock.Set(tt.at)
			e, ok := s.Get(key)
			if got := len(e.Messages) > 0; got != tt.wantMessages {
				t.Errorf("messages present = %v, want %v", got, tt.wantMessages)
			}
			if got := e.Summary != ""; got != tt.wantSummary {
				t.Errorf("summary present = %v, want %v", got, tt.wantSummary)
			}
			if want := tt.wantMessages || tt.wantSummary; ok != want {
				t.Errorf("Get ok = %v, want %v", ok, want)
			}
		})
	}

	t.Run("ConfiguredTTLs", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{MessageTTL: time.Hour, SummaryTTL: 2 * time.Hour})
		key := stm.ChannelKey("g1", "c1")
		MustAppend(t, s, key, "crude")
		MustSetSummary(t, s, key, "summary")
		clock.Set(time.Hour)
		if e, _ := s.Get(key); len(e.Messages) != 0 || e.Summary == "" {
			t.Fatalf("at 1h: %+v, want summary only", e)
		}
		clock.Set(2 * time.Hour)
		if e, ok := s.Get(key); ok {
			t.Fatalf("at 2h: %+v, want nothing", e)
		}
	})
}

func TestUpdateRefreshesTTL(t *testing.T) {
	t.Run("AppendRefreshesMessages", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustAppend(t, s, key, "first")
		clock.Set(10 * time.Hour)
		MustAppend(t, s, key, "second")

		clock.Set(21*time.Hour + 59*time.Minute) // 11h59m after the last append
		e, _ := s.Get(key)
		if diff := cmp.Diff([]string{"first", "second"}, contents(e.Messages)); diff != "" {
			t.Fatalf("messages (-want +got):\n%s", diff)
		}
		clock.Set(22*time.Hour + time.Minute)
		if e, ok := s.Get(key); ok {
			t.Fatalf("Get = %+v, want nothing 12h01m after the last append", e)
		}
	})

	t.Run("SetSummaryRefreshesSummary", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustSetSummary(t, s, key, "v1")
		clock.Set(20 * time.Hour)
		MustSetSummary(t, s, key, "v2")
		clock.Set(43 * time.Hour)
		if e, _ := s.Get(key); e.Summary != "v2" {
			t.Fatalf("summary = %q, want v2 23h after the last update", e.Summary)
		}
		clock.Set(44 * time.Hour)
		if e, ok := s.Get(key); ok {
			t.Fatalf("Get = %+v, want nothing 24h after the last update", e)
		}
	})

	t.Run("AppendDoesNotRefreshSummary", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustSetSummary(t, s, key, "summary")
		clock.Set(23 * time.Hour)
		MustAppend(t, s, key, "late")
		clock.Set(24 * time.Hour)
		e, _ := s.Get(key)
		if e.Summary != "" || len(e.Messages) != 1 {
			t.Fatalf("Get = %+v, want the late message and no summary", e)
		}
	})

	t.Run("SetSummaryDoesNotRefreshMessages", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustAppend(t, s, key, "crude")
		clock.Set(11 * time.Hour)
		MustSetSummary(t, s, key, "summary")
		clock.Set(12 * time.Hour)
		if e, _ := s.Get(key); len(e.Messages) != 0 {
			t.Fatalf("messages = %v, want expired", contents(e.Messages))
		}
	})

	t.Run("ExpiredMessagesNotRevived", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		key := stm.UserKey("g1", "c1", "u1")
		MustSetSummary(t, s, key, "keeps the entry in the cache")
		MustAppend(t, s, key, "old")
		clock.Set(13 * time.Hour)
		MustAppend(t, s, key, "new")
		e, _ := s.Get(key)
		if diff := cmp.Diff([]string{"new"}, contents(e.Messages)); diff != "" {
			t.Fatalf("messages (-want +got):\n%s", diff)
		}
	})
}

func TestContext(t *testing.T) {
	key := stm.ChannelKey("g1", "c1")

	t.Run("SummaryPreferredOverCrude", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		MustAppend(t, s, key, "crude")
		MustSetSummary(t, s, key, "summary")
		if diff := cmp.Diff(stm.View{Summary: "summary"}, s.Context(key)); diff != "" {
			t.Fatalf("Context (-want +got):\n%s", diff)
		}
	})
	t.Run("CrudeWithoutSummary", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		MustAppend(t, s, key, "crude")
		if got := s.Context(key); got.Summary != "" || !cmp.Equal(contents(got.Messages), []string{"crude"}) {
			t.Fatalf("Context = %+v, want the crude message", got)
		}
	})
	t.Run("CrudeAfterSummaryCleared", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		MustAppend(t, s, key, "crude")
		MustSetSummary(t, s, key, "summary")
		MustSetSummary(t, s, key, "")
		if got := s.Context(key); !cmp.Equal(contents(got.Messages), []string{"crude"}) {
			t.Fatalf("Context = %+v, want the crude message", got)
		}
	})
	t.Run("ZeroWhenNothingStored", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		if got := s.Context(key); !got.IsZero() {
			t.Fatalf("Context = %+v, want zero", got)
		}
	})
	t.Run("ZeroWhenAllExpired", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		MustAppend(t, s, key, "crude")
		MustSetSummary(t, s, key, "summary")
		clock.Set(24 * time.Hour)
		if got := s.Context(key); !got.IsZero() {
			t.Fatalf("Context = %+v, want zero", got)
		}
	})
}

// seed stores one message in each key and returns the keys.
func seed(t *testing.T, s *stm.Store, keys ...stm.Key) {
	t.Helper()
	for _, k := range keys {
		MustAppend(t, s, k, "in "+k.String())
	}
}

// present returns the keys among keys that still hold an entry.
func present(s *stm.Store, keys []stm.Key) []stm.Key {
	var out []stm.Key
	for _, k := range keys {
		if _, ok := s.Get(k); ok {
			out = append(out, k)
		}
	}
	return out
}

func TestClearChannel(t *testing.T) {
	var (
		shared      = stm.ChannelKey("g1", "c1")
		u1          = stm.UserKey("g1", "c1", "u1")
		u2          = stm.UserKey("g1", "c1", "u2")
		otherChan   = stm.UserKey("g1", "c2", "u1")
		otherShared = stm.ChannelKey("g1", "c2")
		otherGuild  = stm.UserKey("g2", "c1", "u1")
		dm          = stm.UserKey("", "c1", "u1")
		all         = []stm.Key{shared, u1, u2, otherChan, otherShared, otherGuild, dm}
	)

	t.Run("RemovesSharedAndUserEntriesOfThatChannelOnly", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		seed(t, s, all...)
		if n := s.ClearChannel("g1", "c1"); n != 3 {
			t.Errorf("ClearChannel = %d, want 3", n)
		}
		want := []stm.Key{otherChan, otherShared, otherGuild, dm}
		if diff := cmp.Diff(want, present(s, all)); diff != "" {
			t.Fatalf("remaining keys (-want +got):\n%s", diff)
		}
	})
	t.Run("ExpiredEntriesNotCounted", func(t *testing.T) {
		s, clock := MustNew(t, stm.Options{})
		seed(t, s, shared, u1)
		clock.Set(12 * time.Hour)
		if n := s.ClearChannel("g1", "c1"); n != 0 {
			t.Fatalf("ClearChannel = %d, want 0", n)
		}
	})
	t.Run("EmptyChannelClearsNothing", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		seed(t, s, all...)
		if n := s.ClearChannel("g1", ""); n != 0 {
			t.Fatalf("ClearChannel = %d, want 0", n)
		}
		if got := present(s, all); len(got) != len(all) {
			t.Fatalf("remaining = %v, want all", got)
		}
	})
}

func TestClearUser(t *testing.T) {
	var (
		u1Chan   = stm.UserKey("g1", "c1", "u1")
		u1Other  = stm.UserKey("g2", "c9", "u1")
		u1DM     = stm.UserKey("", "dm1", "u1")
		u2Chan   = stm.UserKey("g1", "c1", "u2")
		u2DM     = stm.UserKey("", "dm2", "u2")
		shared   = stm.ChannelKey("g1", "c1")
		u1Only   = stm.ChannelKey("g2", "c9")
		userKeys = []stm.Key{u1Chan, u1Other, u1DM, u2Chan, u2DM}
	)
	setup := func(t *testing.T) *stm.Store {
		t.Helper()
		s, _ := MustNew(t, stm.Options{})
		seed(t, s, userKeys...)
		for _, m := range []stm.Message{
			{AuthorID: "u1", Role: stm.RoleUser, Content: "u1 says"},
			{AuthorID: "u2", Role: stm.RoleUser, Content: "u2 says"},
			{AuthorID: "bot", Role: stm.RoleAssistant, Content: "bot says", InReplyTo: "u2"},
			{AuthorID: "u1", Role: stm.RoleUser, Content: "u1 again"},
			{AuthorID: "bot", Role: stm.RoleAssistant, Content: "bot answers u1", InReplyTo: "u1"},
		} {
			if err := s.Append(shared, m); err != nil {
				t.Fatal(err)
			}
		}
		MustSetSummary(t, s, shared, "channel summary")
		if err := s.Append(u1Only, stm.Message{AuthorID: "u1", Role: stm.RoleUser, Content: "alone"}); err != nil {
			t.Fatal(err)
		}
		return s
	}

	t.Run("RemovesOnlyThatUsersEntriesEverywhere", func(t *testing.T) {
		s := setup(t)
		if n := s.ClearUser("u1"); n != 3 {
			t.Errorf("ClearUser = %d, want 3", n)
		}
		if diff := cmp.Diff([]stm.Key{u2Chan, u2DM}, present(s, userKeys)); diff != "" {
			t.Fatalf("remaining user keys (-want +got):\n%s", diff)
		}
	})
	t.Run("ScrubsUsersMessagesFromSharedEntries", func(t *testing.T) {
		s := setup(t)
		s.ClearUser("u1")
		e, ok := s.Get(shared)
		if !ok {
			t.Fatal("shared entry removed, want it kept for others")
		}
		if diff := cmp.Diff([]string{"u2 says", "bot says"}, contents(e.Messages)); diff != "" {
			t.Errorf("shared messages (-want +got):\n%s", diff)
		}
		if e.Summary != "" {
			t.Errorf("shared summary written while u1 took part = %q, want dropped", e.Summary)
		}
		if e, ok := s.Get(u1Only); ok {
			t.Errorf("shared entry with only u1's messages = %+v, want removed", e)
		}
	})
	t.Run("SummaryOfOthersIsKept", func(t *testing.T) {
		s := setup(t)
		other := stm.ChannelKey("g1", "c2")
		if err := s.Append(other, stm.Message{AuthorID: "u2", Role: stm.RoleUser, Content: "u2 alone"}); err != nil {
			t.Fatal(err)
		}
		MustSetSummary(t, s, other, "u2 talked about raids")
		s.ClearUser("u1")
		if e, _ := s.Get(other); e.Summary != "u2 talked about raids" {
			t.Errorf("summary u1 had no part in = %q, want kept", e.Summary)
		}
	})
	t.Run("SummaryNamesItsSpeakerAndItsPredecessorsPeople", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		key := stm.ChannelKey("g1", "c3")
		// u3 asked for the first summary before any of their messages was captured; the
		// second summary, written from u2's messages, rewrites the first.
		if err := s.SetSummary(key, "u3 asked about the raid", "u3"); err != nil {
			t.Fatal(err)
		}
		if err := s.Append(key, stm.Message{AuthorID: "u2", Role: stm.RoleUser, Content: "u2 says"}); err != nil {
			t.Fatal(err)
		}
		MustSetSummary(t, s, key, "u3 and u2 discussed the raid")
		s.ClearUser("u3")
		if e, _ := s.Get(key); e.Summary != "" || len(e.Messages) != 1 {
			t.Errorf("after forgetting u3: %+v, want u2's message without the summary", e)
		}
	})
	t.Run("EmptyUserIDClearsNothing", func(t *testing.T) {
		s := setup(t)
		if n := s.ClearUser(""); n != 0 {
			t.Fatalf("ClearUser = %d, want 0", n)
		}
		if e, _ := s.Get(shared); len(e.Messages) != 5 {
			t.Fatalf("shared messages = %v, want untouched", contents(e.Messages))
		}
		if got := present(s, userKeys); len(got) != len(userKeys) {
			t.Fatalf("remaining = %v, want all", got)
		}
	})
}

func TestForUser(t *testing.T) {
	s, clock := MustNew(t, stm.Options{})
	var (
		oldest  = stm.UserKey("g1", "c1", "u1")
		expired = stm.UserKey("g1", "c2", "u1")
		dm      = stm.UserKey("", "dm1", "u1")
		newest  = stm.UserKey("g2", "c3", "u1")
	)
	seed(t, s, expired)
	clock.Set(time.Hour)
	seed(t, s, oldest, stm.ChannelKey("g1", "c1"), stm.UserKey("g1", "c1", "u2"))
	clock.Set(2 * time.Hour)
	seed(t, s, dm)
	clock.Set(3 * time.Hour)
	MustSetSummary(t, s, newest, "summary only")
	clock.Set(12 * time.Hour) // expired's crude TTL ends; the others are younger

	t.Run("OwnEntriesNewestFirst", func(t *testing.T) {
		var got []stm.Key
		for _, e := range s.ForUser("u1") {
			got = append(got, e.Key)
		}
		if diff := cmp.Diff([]stm.Key{newest, dm, oldest}, got); diff != "" {
			t.Fatalf("keys (-want +got):\n%s", diff)
		}
	})
	t.Run("EmptyUserIDReturnsNothing", func(t *testing.T) {
		if got := s.ForUser(""); got != nil {
			t.Fatalf("ForUser(\"\") = %+v, want nil (shared entries must not leak)", got)
		}
	})
	t.Run("UnknownUserReturnsNothing", func(t *testing.T) {
		if got := s.ForUser("u9"); got != nil {
			t.Fatalf("ForUser = %+v, want nil", got)
		}
	})
}

func TestRemove(t *testing.T) {
	s, _ := MustNew(t, stm.Options{})
	key, other := stm.UserKey("g1", "c1", "u1"), stm.UserKey("g1", "c2", "u1")
	seed(t, s, key, other)
	if !s.Remove(key) {
		t.Fatal("Remove = false, want true")
	}
	if s.Remove(key) {
		t.Fatal("second Remove = true, want false")
	}
	if _, ok := s.Get(other); !ok {
		t.Fatal("Remove touched another key")
	}
}

func TestCapacity(t *testing.T) {
	s, _ := MustNew(t, stm.Options{Capacity: 2})
	a, b, c := stm.UserKey("g", "c", "a"), stm.UserKey("g", "c", "b"), stm.UserKey("g", "c", "c")
	seed(t, s, a, b)
	s.Get(a) // a is now more recently used than b
	seed(t, s, c)
	if diff := cmp.Diff([]stm.Key{a, c}, present(s, []stm.Key{a, b, c})); diff != "" {
		t.Fatalf("remaining (-want +got):\n%s", diff)
	}
}

func TestSnapshotsDoNotAlias(t *testing.T) {
	key := stm.UserKey("g1", "c1", "u1")
	full := func(t *testing.T) *stm.Store {
		t.Helper()
		s, _ := MustNew(t, stm.Options{})
		for i := range stm.MaxMessages {
			MustAppend(t, s, key, fmt.Sprint(i))
		}
		return s
	}
	wantFirst := "0"

	t.Run("GetCallerWritesNotStored", func(t *testing.T) {
		s := full(t)
		e, _ := s.Get(key)
		e.Messages[0].Content = "changed"
		if again, _ := s.Get(key); again.Messages[0].Content != wantFirst {
			t.Fatalf("stored message = %q, want %q", again.Messages[0].Content, wantFirst)
		}
	})
	t.Run("GetSnapshotUnchangedByLaterAppend", func(t *testing.T) {
		s := full(t)
		e, _ := s.Get(key)
		MustAppend(t, s, key, "later") // shifts the stored messages in place
		if e.Messages[0].Content != wantFirst {
			t.Fatalf("snapshot message = %q, want %q", e.Messages[0].Content, wantFirst)
		}
	})
	t.Run("ForUserCallerWritesNotStored", func(t *testing.T) {
		s := full(t)
		s.ForUser("u1")[0].Messages[0].Content = "changed"
		if again, _ := s.Get(key); again.Messages[0].Content != wantFirst {
			t.Fatalf("stored message = %q, want %q", again.Messages[0].Content, wantFirst)
		}
	})
	t.Run("ContextCallerWritesNotStored", func(t *testing.T) {
		s := full(t)
		s.Context(key).Messages[0].Content = "changed"
		if again := s.Context(key); again.Messages[0].Content != wantFirst {
			t.Fatalf("stored message = %q, want %q", again.Messages[0].Content, wantFirst)
		}
	})
	t.Run("ContextSnapshotUnchangedByClearUser", func(t *testing.T) {
		s, _ := MustNew(t, stm.Options{})
		shared := stm.ChannelKey("g1", "c1")
		for _, author := range []string{"u1", "u2", "u1"} {
			if err := s.Append(shared, stm.Message{AuthorID: author, Role: stm.RoleUser, Content: author}); err != nil {
				t.Fatal(err)
			}
		}
		v := s.Context(shared)
		s.ClearUser("u1") // deletes from the stored slice in place
		if diff := cmp.Diff([]string{"u1", "u2", "u1"}, contents(v.Messages)); diff != "" {
			t.Fatalf("snapshot (-want +got):\n%s", diff)
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	s, clock := MustNew(t, stm.Options{Capacity: 64})
	const workers, rounds = 32, 300
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			user := fmt.Sprintf("u%d", w%8)
			for i := range rounds {
				guild, channel := fmt.Sprintf("g%d", i%3), fmt.Sprintf("c%d", i%5)
				key := stm.UserKey(guild, channel, user)
				switch i % 10 {
				case 0:
					s.ClearChannel(guild, channel)
				case 1:
					s.ClearUser(user)
				case 2:
					if err := s.SetSummary(key, fmt.Sprintf("summary %d", i)); err != nil {
						t.Error(err)
					}
				case 3:
					for _, e := range s.ForUser(user) {
						if e.Key.UserID != user {
							t.Errorf("ForUser(%s) returned %v", user, e.Key)
						}
					}
				case 4:
					clock.Advance(time.Minute)
				case 5:
					s.Remove(key)
				default:
					MustAppend(t, s, key, fmt.Sprint(i))
					MustAppend(t, s, stm.ChannelKey(guild, channel), fmt.Sprint(i))
					if e, ok := s.Get(key); ok && len(e.Messages) > stm.MaxMessages {
						t.Errorf("entry holds %d messages", len(e.Messages))
					}
					s.Context(stm.ChannelKey(guild, channel))
				}
			}
		})
	}
	wg.Wait()
}

func ExampleStore_Context() {
	s, _ := stm.New(stm.Options{})
	key := stm.UserKey("guild", "channel", "user")
	_ = s.Append(key, stm.Message{AuthorID: "user", AuthorName: "Aiko", Role: stm.RoleUser, Content: "I'm moving to Osaka"})
	fmt.Println(len(s.Context(key).Messages), "message")

	_ = s.SetSummary(key, "Aiko is moving to Osaka next month.")
	fmt.Println(s.Context(key).Summary)
	// Output:
	// 1 message
	// Aiko is moving to Osaka next month.
}
