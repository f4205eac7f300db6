package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
)

var (
	aiko = tools.Participant{UserID: "111", Name: "Aiko", Privacy: memory.PrivacyNormal}
	ben  = tools.Participant{UserID: "222", Name: "Ben", Privacy: memory.PrivacyNormal}
)

func guildConv() tools.Conversation {
	return tools.Conversation{GuildID: "g1", ChannelID: "c1", MessageID: "m1", Speaker: aiko,
		Others: []tools.Participant{ben}, SelfTeaching: true}
}

func dmConv() tools.Conversation {
	return tools.Conversation{ChannelID: "dm1", MessageID: "m1", Speaker: aiko, SelfTeaching: true}
}

type fixture struct {
	store *ltm.Store
	short *stm.Store
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	short, err := stm.New(stm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{store: testkit.MustOpenStore(t), short: short}
}

func (f *fixture) box(conv tools.Conversation) *tools.Toolbox {
	return tools.New(conv, f.store.Memories, f.store.Duplicates, f.store.Recall, f.short, nil)
}

// result decodes a tool result.
type result struct {
	OK           bool   `json:"ok"`
	Error        string `json:"error"`
	MemoryID     int64  `json:"memory_id"`
	Scope        string `json:"scope"`
	About        string `json:"about"`
	AlreadyKnown bool   `json:"already_known"`
	Forgotten    bool   `json:"forgotten"`
	Results      []struct {
		ID      int64  `json:"id"`
		Scope   string `json:"scope"`
		About   string `json:"about"`
		Content string `json:"content"`
	} `json:"results"`
}

func call(t *testing.T, tb *tools.Toolbox, name, args string) (result, error) {
	t.Helper()
	content, err := tb.Call(context.Background(), name, args)
	var r result
	if jerr := json.Unmarshal([]byte(content), &r); jerr != nil {
		t.Fatalf("tool result is not JSON: %q", content)
	}
	if (err == nil) != r.OK {
		t.Fatalf("err = %v but result ok = %v: %s", err, r.OK, content)
	}
	if err != nil && r.Error == "" {
		t.Fatalf("failed call without an error text: %s", content)
	}
	return r, err
}

func mustCall(t *testing.T, tb *tools.Toolbox, name, args string) result {
	t.Helper()
	r, err := call(t, tb, name, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return r
}

func wantRefused(t *testing.T, tb *tools.Toolbox, name, args, code, mentions string) result {
	t.Helper()
	r, err := call(t, tb, name, args)
	if err == nil {
		t.Fatalf("%s(%s) succeeded, want %s", name, args, code)
	}
	if got := memory.ErrorCode(err); got != code {
		t.Fatalf("%s(%s) code = %s (%v), want %s", name, args, got, err, code)
	}
	if !strings.Contains(strings.ToLower(r.Error), strings.ToLower(mentions)) {
		t.Fatalf("error %q does not mention %q", r.Error, mentions)
	}
	return r
}

func TestDefinitions(t *testing.T) {
	tests := []struct {
		name string
		conv func() tools.Conversation
		want []string
	}{
		{"GuildSelfTeaching", guildConv, []string{tools.NameCreateLTM, tools.NameUpdateLTM, tools.NameUpdateSTM, tools.NameSearch}},
		{"GuildSelfTeachingOff", func() tools.Conversation { c := guildConv(); c.SelfTeaching = false; return c },
			[]string{tools.NameUpdateSTM, tools.NameSearch}},
		{"ExplicitIntentDropsSTM", func() tools.Conversation { c := guildConv(); c.ExplicitIntent = true; return c },
			[]string{tools.NameCreateLTM, tools.NameUpdateLTM, tools.NameSearch}},
		{"DM", dmConv, []string{tools.NameCreateLTM, tools.NameUpdateLTM, tools.NameUpdateSTM, tools.NameSearch}},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs := f.box(tt.conv()).Definitions()
			var names []string
			for _, d := range defs {
				names = append(names, d.Function.Name)
				if d.Function.Description == "" {
					t.Errorf("%s has no description", d.Function.Name)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("tools = %v, want %v", names, tt.want)
			}
		})
	}

	t.Run("SchemaFromArgsStruct", func(t *testing.T) {
		defs := f.box(guildConv()).Definitions()
		b, err := json.Marshal(defs[0].Function.Parameters)
		if err != nil {
			t.Fatal(err)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		if schema.Type != "object" || !slices.Equal(schema.Required, []string{"memory_content", "memory_scope"}) ||
			len(schema.Properties) != 3 || !strings.Contains(string(schema.Properties["memory_scope"]), "server_wide") {
			t.Fatalf("create schema = %s", b)
		}
	})

	t.Run("DMOffersOnlyPersonalScope", func(t *testing.T) {
		defs := f.box(dmConv()).Definitions()
		b, _ := json.Marshal(defs[0].Function.Parameters)
		if strings.Contains(string(b), "server_wide") {
			t.Fatalf("DM create schema offers server_wide: %s", b)
		}
		// The shared guild schema must not have been modified by the DM variant.
		b, _ = json.Marshal(f.box(guildConv()).Definitions()[0].Function.Parameters)
		if !strings.Contains(string(b), "server_wide") {
			t.Fatalf("guild schema lost server_wide after building a DM schema: %s", b)
		}
	})
}

func TestCreate(t *testing.T) {
	ctx := context.Background()

	t.Run("PersonalForSpeakerWithProvenance", func(t *testing.T) {
		f := newFixture(t)
		tb := f.box(guildConv())
		r := mustCall(t, tb, tools.NameCreateLTM, `{"memory_content":"Aiko prefers  green tea.","memory_scope":"target_user"}`)
		m, err := f.store.Memories.Get(ctx, memory.PersonalOwner("111"), r.MemoryID)
		if err != nil {
			t.Fatal(err)
		}
		want := memory.Provenance{AuthorID: "111", Author: "Aiko", ChannelID: "c1", MessageID: "m1"}
		if m.Content != "Aiko prefers green tea." || m.Source != memory.SourceTool || m.GuildID != "g1" || m.Provenance != want {
			t.Fatalf("stored %+v", m)
		}
		n := tb.Notices()
		if len(n) != 1 || n[0].Action != tools.NoticeSaved || n[0].MemoryID != m.ID || n[0].Scope != memory.ScopePersonal || n[0].UserID != "111" ||
			n[0].Version != 1 {
			t.Fatalf("notices = %+v", n)
		}
		if r.About != "Aiko" {
			t.Errorf("about = %q", r.About)
		}
	})

	t.Run("ServerWide", func(t *testing.T) {
		f := newFixture(t)
		r := mustCall(t, f.box(guildConv()), tools.NameCreateLTM, `{"memory_content":"The raid is on Friday","memory_scope":"server_wide","target_user":null}`)
		if _, err := f.store.Memories.Get(ctx, memory.ServerOwner("g1"), r.MemoryID); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("OtherParticipantByIDNameOrMention", func(t *testing.T) {
		for _, target := range []string{"222", "ben", "<@222>", "<@!222>"} {
			f := newFixture(t)
			r := mustCall(t, f.box(guildConv()), tools.NameCreateLTM, `{"memory_content":"Ben plays chess","memory_scope":"target_user","target_user":"`+target+`"}`)
			m, err := f.store.Memories.Get(ctx, memory.PersonalOwner("222"), r.MemoryID)
			if err != nil {
				t.Fatalf("target %q: %v", target, err)
			}
			if m.Provenance.AuthorID != "111" {
				t.Errorf("author = %q, want the speaker", m.Provenance.AuthorID)
			}
		}
	})

	t.Run("DuplicateIsAlreadyKnownWithoutNotice", func(t *testing.T) {
		f := newFixture(t)
		tb := f.box(guildConv())
		first := mustCall(t, tb, tools.NameCreateLTM, `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`)
		again := mustCall(t, tb, tools.NameCreateLTM, `{"memory_content":"the raid is on friday!","memory_scope":"server_wide"}`)
		if !again.AlreadyKnown || again.MemoryID != first.MemoryID || len(tb.Notices()) != 1 {
			t.Fatalf("second save = %+v, notices %d", again, len(tb.Notices()))
		}
	})

	refusals := []struct {
		name, args, code, mentions string
		conv                       func() tools.Conversation
	}{
		{"ErrSecret", `{"memory_content":"my key is sk-proj-abcdefghijklmnopqrstuvwxyz123456","memory_scope":"target_user"}`, memory.EINVALID, "secret", guildConv},
		{"ErrEmptyContent", `{"memory_content":"   ","memory_scope":"target_user"}`, memory.EINVALID, "empty", guildConv},
		{"ErrTooLong", `{"memory_content":"` + strings.Repeat("a", 2001) + `","memory_scope":"target_user"}`, memory.EINVALID, "2000", guildConv},
		{"ErrNotAParticipant", `{"memory_content":"Cleo likes jazz","memory_scope":"target_user","target_user":"333"}`, memory.EINVALID, "not part of this conversation", guildConv},
		{"ErrServerWideInDM", `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`, memory.EINVALID, "target_user", dmConv},
		{"ErrOtherUserInDM", `{"memory_content":"Ben plays chess","memory_scope":"target_user","target_user":"222"}`, memory.EINVALID, "direct message", dmConv},
		{"ErrTargetWithServerWide", `{"memory_content":"x y","memory_scope":"server_wide","target_user":"222"}`, memory.EINVALID, "target_user", guildConv},
		{"ErrInvalidJSON", `{"memory_content": "tea`, memory.EINVALID, "not valid json", guildConv},
		{"ErrNotAnObject", `["tea"]`, memory.EINVALID, "json object", guildConv},
		{"ErrMissingScope", `{"memory_content":"tea","scope":"server_wide"}`, memory.EINVALID, "memory_scope", guildConv},
		{"ErrUnknownScope", `{"memory_content":"tea","memory_scope":"global"}`, memory.EINVALID, "one of server_wide, target_user", guildConv},
		{"ErrWrongType", `{"memory_content":42,"memory_scope":"server_wide"}`, memory.EINVALID, "memory_content must be a string", guildConv},
		{"ErrSelfTeachingOff", `{"memory_content":"tea","memory_scope":"server_wide"}`, memory.EFORBIDDEN, "/kioku config",
			func() tools.Conversation { c := guildConv(); c.SelfTeaching = false; return c }},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			tb := f.box(tt.conv())
			wantRefused(t, tb, tools.NameCreateLTM, tt.args, tt.code, tt.mentions)
			assertNoMemories(t, f.store, "g1", "111", "222", "333")
			if len(tb.Notices()) != 0 {
				t.Errorf("notices after a refused call: %+v", tb.Notices())
			}
		})
	}

	for _, level := range []memory.Privacy{memory.PrivacyPartial, memory.PrivacyFull} {
		t.Run("ErrTargetPrivacy"+string(level), func(t *testing.T) {
			f := newFixture(t)
			c := guildConv()
			c.Others[0].Privacy = level
			tb := f.box(c)
			wantRefused(t, tb, tools.NameCreateLTM, `{"memory_content":"Ben plays chess","memory_scope":"target_user","target_user":"222"}`,
				memory.EFORBIDDEN, string(level))
			assertNoMemories(t, f.store, "g1", "111", "222")
			// Server memory is not personal: a partial speaker can still teach the server.
			mustCall(t, tb, tools.NameCreateLTM, `{"memory_content":"The raid is on Friday","memory_scope":"server_wide"}`)
		})
	}
}

// assertNoMemories fails if the guild's server memory or any of the users' personal
// memories holds a live memory.
func assertNoMemories(t *testing.T, s *ltm.Store, guildID string, userIDs ...string) {
	t.Helper()
	owners := []memory.Owner{memory.ServerOwner(guildID)}
	for _, u := range userIDs {
		owners = append(owners, memory.PersonalOwner(u))
	}
	for _, o := range owners {
		_, n, err := s.Memories.List(context.Background(), o, memory.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s holds %d memories, want none", o, n)
		}
	}
}

func TestUpdate(t *testing.T) {
	ctx := context.Background()
	type seeded struct {
		server, otherGuild, own, ownOtherGuild, ownDM, bens, pinned *memory.Memory
	}
	seed := func(t *testing.T, s *ltm.Store) seeded {
		return seeded{
			// Aiko authored it, so the model may change it for her (TestServerMemoryChangeRule).
			server: testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The raid is on Friday",
				Provenance: memory.Provenance{AuthorID: "111"}}),
			otherGuild:    testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Other guild secret plans"}),
			own:           testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: "Aiko likes tea"}),
			ownOtherGuild: testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g2", Content: "Aiko's other-server fact"}),
			ownDM:         testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "111", Content: "Aiko said this in a DM"}),
			bens:          testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopePersonal, UserID: "222", GuildID: "g1", Content: "Ben plays chess"}),
			pinned:        testkit.MustRemember(t, s, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "Rules: be kind", Pinned: true}),
		}
	}
	idArgs := func(id int64, content string) string {
		b, _ := json.Marshal(map[string]any{"memory_id": id, "memory_content": content})
		return string(b)
	}

	t.Run("UpdatesServerMemory", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		tb := f.box(guildConv())
		mustCall(t, tb, tools.NameUpdateLTM, idArgs(m.server.ID, "The raid moved to Saturday"))
		got, err := f.store.Memories.Get(ctx, memory.ServerOwner("g1"), m.server.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != "The raid moved to Saturday" || got.Version != 2 {
			t.Fatalf("after update: %+v", got)
		}
		hist, err := f.store.Memories.History(ctx, memory.ServerOwner("g1"), m.server.ID)
		if err != nil {
			t.Fatal(err)
		}
		if last := hist[len(hist)-1]; last.Actor != memory.ModelActor("111") {
			t.Errorf("history actor = %q, want %q (%+v)", last.Actor, memory.ModelActor("111"), hist)
		}
		// The version the change made, which the notice's Undo button checks.
		if n := tb.Notices(); len(n) != 1 || n[0].Action != tools.NoticeUpdated || n[0].Content != "The raid moved to Saturday" || n[0].Version != 2 {
			t.Fatalf("notices = %+v", n)
		}
	})

	t.Run("SameContentChangesNothing", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		tb := f.box(guildConv())
		mustCall(t, tb, tools.NameUpdateLTM, idArgs(m.server.ID, "  The raid is on   Friday "))
		assertUnchanged(t, f.store, m.server)
		if n := tb.Notices(); len(n) != 0 {
			t.Fatalf("notices = %+v", n)
		}
	})

	t.Run("EmptyContentForgetsSoftly", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		tb := f.box(guildConv())
		r := mustCall(t, tb, tools.NameUpdateLTM, idArgs(m.own.ID, ""))
		if !r.Forgotten {
			t.Fatalf("result = %+v", r)
		}
		if _, err := f.store.Memories.Get(ctx, memory.PersonalOwner("111"), m.own.ID); memory.ErrorCode(err) != memory.ENOTFOUND {
			t.Fatalf("memory still live: %v", err)
		}
		gone, err := f.store.Channels.Lookup(ctx, memory.PersonalOwner("111"), m.own.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := tb.Notices(); len(n) != 1 || n[0].Action != tools.NoticeDeleted || n[0].Content != "Aiko likes tea" || n[0].Version != gone.Version {
			t.Fatalf("notices = %+v, forgotten version %d", n, gone.Version)
		}
		if _, err := f.store.Memories.Recover(ctx, memory.PersonalOwner("111"), m.own.ID, 0, "test"); err != nil {
			t.Fatalf("forgotten memory not recoverable: %v", err)
		}
		if n := tb.Notices(); len(n) != 1 {
			t.Fatalf("notices = %+v", n)
		}
	})

	t.Run("DMReachesAllOwnPersonal", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		tb := f.box(dmConv())
		for _, id := range []int64{m.own.ID, m.ownOtherGuild.ID, m.ownDM.ID} {
			mustCall(t, tb, tools.NameUpdateLTM, idArgs(id, "edited in a DM "+string(rune('a'+id))))
		}
		wantRefused(t, tb, tools.NameUpdateLTM, idArgs(m.server.ID, "x y"), memory.ENOTFOUND, "no memory")
	})

	t.Run("CrossServerOptInReachesOtherOrigins", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		c := guildConv()
		c.Speaker.CrossServer = true
		mustCall(t, f.box(c), tools.NameUpdateLTM, idArgs(m.ownOtherGuild.ID, "Aiko's fact, edited"))
	})

	notFound := []struct {
		name string
		id   func(seeded) int64
	}{
		{"ErrOtherGuildServerMemory", func(s seeded) int64 { return s.otherGuild.ID }},
		{"ErrOtherUsersPersonalMemory", func(s seeded) int64 { return s.bens.ID }},
		{"ErrOwnPersonalFromOtherGuild", func(s seeded) int64 { return s.ownOtherGuild.ID }},
		{"ErrOwnPersonalFromDM", func(s seeded) int64 { return s.ownDM.ID }},
		{"ErrNoSuchID", func(seeded) int64 { return 9999 }},
	}
	for _, tt := range notFound {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			m := seed(t, f.store)
			tb := f.box(guildConv())
			id := tt.id(m)
			for _, content := range []string{"overwritten by someone else", ""} {
				r := wantRefused(t, tb, tools.NameUpdateLTM, idArgs(id, content), memory.ENOTFOUND, "no memory")
				if strings.Contains(r.Error, "Other guild") || strings.Contains(r.Error, "chess") {
					t.Fatalf("not-found error leaks content: %q", r.Error)
				}
			}
			assertUnchanged(t, f.store, m.otherGuild, m.bens, m.ownOtherGuild, m.ownDM, m.server, m.own)
		})
	}

	t.Run("ErrPinned", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		wantRefused(t, f.box(guildConv()), tools.NameUpdateLTM, idArgs(m.pinned.ID, ""), memory.EFORBIDDEN, "pinned")
		assertUnchanged(t, f.store, m.pinned)
	})

	t.Run("ErrPartialSpeakerPersonal", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		c := guildConv()
		c.Speaker.Privacy = memory.PrivacyPartial
		tb := f.box(c)
		wantRefused(t, tb, tools.NameUpdateLTM, idArgs(m.own.ID, "changed"), memory.EFORBIDDEN, "partial")
		assertUnchanged(t, f.store, m.own)
		mustCall(t, tb, tools.NameUpdateLTM, idArgs(m.server.ID, "The raid moved to Sunday"))
	})

	t.Run("ErrSecret", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		wantRefused(t, f.box(guildConv()), tools.NameUpdateLTM, idArgs(m.server.ID, "password=hunter22 for the raid"), memory.EINVALID, "secret")
		assertUnchanged(t, f.store, m.server)
	})

	t.Run("ErrIDAsString", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		wantRefused(t, f.box(guildConv()), tools.NameUpdateLTM, `{"memory_id":"1","memory_content":"x"}`, memory.EINVALID, "whole number")
		assertUnchanged(t, f.store, m.server)
	})

	t.Run("ErrMissingContent", func(t *testing.T) {
		f := newFixture(t)
		m := seed(t, f.store)
		wantRefused(t, f.box(guildConv()), tools.NameUpdateLTM, fmt.Sprintf(`{"memory_id":%d}`, m.server.ID), memory.EINVALID, "memory_content")
	})
}

// assertUnchanged fails unless every memory is still live at its seeded version and
// content.
func assertUnchanged(t *testing.T, s *ltm.Store, mems ...*memory.Memory) {
	t.Helper()
	for _, m := range mems {
		got, err := s.Memories.Get(context.Background(), m.Owner(), m.ID)
		if err != nil {
			t.Errorf("memory #%d: %v", m.ID, err)
			continue
		}
		if got.Version != m.Version || got.Content != m.Content {
			t.Errorf("memory #%d changed: version %d→%d, %q→%q", m.ID, m.Version, got.Version, m.Content, got.Content)
		}
	}
}

func TestShortTermSummary(t *testing.T) {
	t.Run("GuildWritesChannelEntryOncePerTurn", func(t *testing.T) {
		f := newFixture(t)
		tb := f.box(guildConv())
		mustCall(t, tb, tools.NameUpdateSTM, `{"summary":"Aiko and Ben plan the raid."}`)
		if got := f.short.Context(stm.ChannelKey("g1", "c1")).Summary; got != "Aiko and Ben plan the raid." {
			t.Fatalf("summary = %q", got)
		}
		wantRefused(t, tb, tools.NameUpdateSTM, `{"summary":"Second try."}`, memory.ECONFLICT, "once per message")
		if got := f.short.Context(stm.ChannelKey("g1", "c1")).Summary; got != "Aiko and Ben plan the raid." {
			t.Fatalf("second call replaced the summary: %q", got)
		}
		// A new turn gets a new toolbox and may write again.
		mustCall(t, f.box(guildConv()), tools.NameUpdateSTM, `{"summary":"Next turn."}`)
	})

	t.Run("DMWritesUserEntry", func(t *testing.T) {
		f := newFixture(t)
		mustCall(t, f.box(dmConv()), tools.NameUpdateSTM, `{"summary":"Aiko asked about tea."}`)
		if got := f.short.Context(stm.UserKey("", "dm1", "111")).Summary; got != "Aiko asked about tea." {
			t.Fatalf("summary = %q", got)
		}
	})

	t.Run("ErrExplicitIntent", func(t *testing.T) {
		f := newFixture(t)
		c := guildConv()
		c.ExplicitIntent = true
		wantRefused(t, f.box(c), tools.NameUpdateSTM, `{"summary":"Aiko wants tea remembered."}`, memory.EFORBIDDEN, "create_long_term_memory")
		if v := f.short.Context(stm.ChannelKey("g1", "c1")); !v.IsZero() {
			t.Fatalf("summary written despite the intent gate: %+v", v)
		}
	})

	t.Run("ErrTooLong", func(t *testing.T) {
		f := newFixture(t)
		wantRefused(t, f.box(guildConv()), tools.NameUpdateSTM, `{"summary":"`+strings.Repeat("a", stm.MaxSummaryChars+1)+`"}`, memory.EINVALID, "1501")
	})

	t.Run("SecretsRedacted", func(t *testing.T) {
		f := newFixture(t)
		mustCall(t, f.box(dmConv()), tools.NameUpdateSTM, `{"summary":"Aiko pasted password=hunter22 by mistake."}`)
		if got := f.short.Context(stm.UserKey("", "dm1", "111")).Summary; strings.Contains(got, "hunter22") {
			t.Fatalf("summary kept the secret: %q", got)
		}
	})
}

func TestSearch(t *testing.T) {
	f := newFixture(t)
	s := f.store
	mk := func(m memory.Memory) *memory.Memory { return testkit.MustRemember(t, s, m) }
	server := mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The guild drinks tea on Fridays"})
	mk(memory.Memory{Scope: memory.ScopeServer, GuildID: "g2", Content: "Other guild tea party"})
	own := mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g1", Content: "Aiko prefers green tea"})
	ownG2 := mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "111", GuildID: "g2", Content: "Aiko tea fact from another server"})
	bens := mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "222", GuildID: "g1", Content: "Ben hates tea"})
	mk(memory.Memory{Scope: memory.ScopePersonal, UserID: "333", GuildID: "g1", Content: "Cleo loves tea"})

	ids := func(r result) []int64 {
		var out []int64
		for _, h := range r.Results {
			out = append(out, h.ID)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name string
		conv func() tools.Conversation
		args string
		want []int64
	}{
		{"AllVisibleScopes", guildConv, `{"query":"tea"}`, []int64{server.ID, own.ID, bens.ID}},
		{"ServerOnly", guildConv, `{"query":"tea","scope":"server"}`, []int64{server.ID}},
		{"PersonalOnly", guildConv, `{"query":"tea","scope":"personal"}`, []int64{own.ID, bens.ID}},
		{"PartialParticipantExcluded", func() tools.Conversation {
			c := guildConv()
			c.Others[0].Privacy = memory.PrivacyPartial
			return c
		}, `{"query":"tea"}`, []int64{server.ID, own.ID}},
		{"DMAllOwnOrigins", dmConv, `{"query":"tea","scope":null}`, []int64{own.ID, ownG2.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustCall(t, f.box(tt.conv()), tools.NameSearch, tt.args)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if got := ids(r); !slices.Equal(got, want) {
				t.Fatalf("ids = %v, want %v (%+v)", got, want, r.Results)
			}
		})
	}
	t.Run("PersonalHitsNameTheirOwner", func(t *testing.T) {
		r := mustCall(t, f.box(guildConv()), tools.NameSearch, `{"query":"hates"}`)
		if len(r.Results) != 1 || r.Results[0].About != "Ben" || r.Results[0].Scope != "personal" {
			t.Fatalf("results = %+v", r.Results)
		}
	})
	t.Run("ErrServerInDM", func(t *testing.T) {
		wantRefused(t, f.box(dmConv()), tools.NameSearch, `{"query":"tea","scope":"server"}`, memory.EINVALID, "direct message")
	})
	t.Run("ErrEmptyQuery", func(t *testing.T) {
		wantRefused(t, f.box(guildConv()), tools.NameSearch, `{"query":"  "}`, memory.EINVALID, "query")
	})
}

// TestSearchCountsAccess: search_memories is recall for someone, so the memories it returns
// are counted as accessed and their importance decay starts again from the base.
func TestSearchCountsAccess(t *testing.T) {
	f := newFixture(t)
	clock := testkit.NewClock(time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC))
	f.store.Now = clock.Now
	hit := testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The ferry leaves at noon", Importance: 0.8})
	miss := testkit.MustRemember(t, f.store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "The bakery opens at six", Importance: 0.8})
	clock.Advance(20 * 24 * time.Hour)

	r := mustCall(t, f.box(guildConv()), tools.NameSearch, `{"query":"ferry"}`)
	if len(r.Results) != 1 || r.Results[0].ID != hit.ID {
		t.Fatalf("results = %+v, want #%d", r.Results, hit.ID)
	}
	if err := f.store.Recall.FlushAccess(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := f.store.Memories.Get(t.Context(), memory.ServerOwner("g1"), hit.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount != 1 || !got.AccessedAt.Equal(clock.Now()) || got.EffectiveImportance(clock.Now()) != 0.8 {
		t.Fatalf("returned memory: count %d, last access %v, effective importance %v; want 1, %v, 0.8",
			got.AccessCount, got.AccessedAt, got.EffectiveImportance(clock.Now()), clock.Now())
	}
	other, err := f.store.Memories.Get(t.Context(), memory.ServerOwner("g1"), miss.ID)
	if err != nil {
		t.Fatal(err)
	}
	if other.AccessCount != 0 || other.EffectiveImportance(clock.Now()) >= 0.8 {
		t.Fatalf("memory the search did not return: count %d, effective importance %v; want 0 and decayed",
			other.AccessCount, other.EffectiveImportance(clock.Now()))
	}
}

func TestUnknownTool(t *testing.T) {
	f := newFixture(t)
	wantRefused(t, f.box(guildConv()), "delete_everything", `{}`, memory.EINVALID, "search_memories")
}

func TestNoticeString(t *testing.T) {
	tests := []struct {
		n    tools.Notice
		want string
	}{
		{tools.Notice{Action: tools.NoticeSaved, Scope: memory.ScopeServer, MemoryID: 42, Content: "The raid is on Friday"}, "📌 Remembered (server) #42: The raid is on Friday"},
		{tools.Notice{Action: tools.NoticeSaved, Scope: memory.ScopePersonal, MemoryID: 7, Content: "Aiko likes tea"}, "📌 Remembered (personal) #7: Aiko likes tea"},
		{tools.Notice{Action: tools.NoticeUpdated, Scope: memory.ScopeServer, MemoryID: 42, Content: "Saturday"}, "✏️ Updated #42: Saturday"},
		{tools.Notice{Action: tools.NoticeDeleted, Scope: memory.ScopeServer, MemoryID: 42, Content: "Saturday"}, "🗑️ Forgot #42: Saturday"},
		{tools.Notice{Action: tools.NoticeSaved, Scope: memory.ScopeServer, MemoryID: 1, Content: strings.Repeat("あ", 300)},
			"📌 Remembered (server) #1: " + strings.Repeat("あ", 199) + "…"},
	}
	for _, tt := range tests {
		if got := tt.n.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
