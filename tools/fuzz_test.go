package tools_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
)

var toolNames = []string{tools.NameCreateLTM, tools.NameUpdateLTM, tools.NameUpdateSTM, tools.NameSearch}

// FuzzToolArguments sends arbitrary arguments to each tool, in a guild and in a DM, on a
// real store. Every call answers with a JSON result whose "ok" matches the error; a
// failure is a domain error (never an internal one) with a message for the model;
// arguments that are not a JSON object are refused as invalid; and a call succeeds only
// with arguments that validate: content within the memory rules (at most 2000
// characters, no credential), a summary of at most 1500 characters, a positive memory id,
// a query of 1–MaxQueryRunes characters, values from the enums. What a call stores is
// the validated form of what it was sent.
func FuzzToolArguments(f *testing.F) {
	for i, args := range []string{
		`{"memory_content":"Aiko prefers green tea","memory_scope":"target_user"}`,
		`{"memory_content":"Raid night is on Friday","memory_scope":"server_wide","target_user":null}`,
		`{"memory_content":"Ben likes jazz","memory_scope":"target_user","target_user":"<@222>"}`,
		`{"memory_content":"password=hunter2hunter2","memory_scope":"server_wide"}`,
		`{"memory_content":"` + strings.Repeat("あ", 2001) + `","memory_scope":"server_wide"}`,
		`{"memory_id":1,"memory_content":"Raid night is on Saturday"}`,
		`{"memory_id":"1","memory_content":""}`,
		`{"memory_id":1.5}`, `{"memory_id":-3,"memory_content":"x"}`, `{"memory_id":1e400}`,
		`{"summary":"Aiko and Ben plan the raid"}`, `{"summary":"` + strings.Repeat("a", 1501) + `"}`,
		`{"query":"raid night","scope":"server"}`, `{"query":"\"unbalanced AND ( OR * NEAR","scope":"all"}`,
		`{"query":"   ","scope":"nowhere"}`, `{"query":"` + strings.Repeat("word ", 200) + `"}`,
		``, `null`, `[]`, `"text"`, `{`, `{"extra":true}`, "{\"memory_content\":\"a\xffb\"}",
	} {
		f.Add(uint8(i), args)
	}
	store := testkit.MustOpenStore(f)
	testkit.MustRemember(f, store, memory.Memory{Scope: memory.ScopeServer, GuildID: "g1",
		Content: "Raid night is on Friday", Provenance: memory.Provenance{AuthorID: aiko.UserID}})
	short, err := stm.New(stm.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		name := toolNames[int(which)%len(toolNames)]
		conv := guildConv()
		if which&0x80 != 0 {
			conv = dmConv()
		}
		tb := tools.New(conv, store.Memories, store.Duplicates, store.Recall, short, nil)
		r, err := call(t, tb, name, args)
		if code := memory.ErrorCode(err); err != nil && code == memory.EINTERNAL {
			t.Fatalf("%s(%q) failed inside: %v", name, args, err)
		}
		obj, isObject := argObject(args)
		if !isObject {
			if memory.ErrorCode(err) != memory.EINVALID {
				t.Fatalf("%s(%q): arguments that are no JSON object gave %v, want %s", name, args, err, memory.EINVALID)
			}
			return
		}
		if err != nil {
			return
		}
		switch name {
		case tools.NameCreateLTM:
			content := mustClean(t, name, obj["memory_content"])
			if s, _ := obj["memory_scope"].(string); s != tools.ScopeServerWide && s != tools.ScopeTargetUser {
				t.Fatalf("%s accepted memory_scope %v", name, obj["memory_scope"])
			}
			saved := savedContent(t, store, conv, r.MemoryID)
			if !r.AlreadyKnown && saved != content {
				t.Fatalf("%s(%q) stored %q, want %q", name, args, saved, content)
			}
			if r.AlreadyKnown && memory.Hash(saved) != memory.Hash(content) {
				t.Fatalf("%s(%q) called %q already known as %q", name, args, content, saved)
			}
		case tools.NameUpdateLTM:
			id, ok := obj["memory_id"].(float64)
			if !ok || id <= 0 || id != math.Trunc(id) {
				t.Fatalf("%s accepted memory_id %v", name, obj["memory_id"])
			}
			if s, _ := obj["memory_content"].(string); strings.TrimSpace(s) != "" && !r.Forgotten {
				if saved, want := savedContent(t, store, conv, int64(id)), mustClean(t, name, s); saved != want {
					t.Fatalf("%s(%q) left %q, want %q", name, args, saved, want)
				}
			}
		case tools.NameUpdateSTM:
			s, _ := obj["summary"].(string)
			sum := memory.RedactSecrets(strings.TrimSpace(s))
			if n := utf8.RuneCountInString(sum); n == 0 || n > stm.MaxSummaryChars {
				t.Fatalf("%s accepted a summary of %d characters", name, n)
			}
		case tools.NameSearch:
			q, _ := obj["query"].(string)
			if n := utf8.RuneCountInString(memory.CollapseSpace(q)); n == 0 || n > tools.MaxQueryRunes {
				t.Fatalf("%s accepted a query of %d characters", name, n)
			}
			switch obj["scope"] {
			case nil, "", tools.SearchAll, tools.SearchServer, tools.SearchPersonal:
			default:
				t.Fatalf("%s accepted scope %v", name, obj["scope"])
			}
		}
	})
}

// argObject decodes tool arguments the way the model's JSON reads: blank is an empty
// object. It reports false for anything that is not a JSON object.
func argObject(args string) (map[string]any, bool) {
	args = strings.TrimSpace(args)
	if args == "" {
		return map[string]any{}, true
	}
	var v any
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	return obj, ok
}

// mustClean returns the stored form of content a successful call was sent, failing if
// the memory rules refuse it.
func mustClean(t *testing.T, tool string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s accepted memory_content %v", tool, v)
	}
	c, err := memory.CleanContent(s)
	if err != nil {
		t.Fatalf("%s accepted memory_content %q that the memory rules refuse: %v", tool, s, err)
	}
	return c
}

// savedContent reads memory id from the scopes a call in conv may write.
func savedContent(t *testing.T, store *ltm.Store, conv tools.Conversation, id int64) string {
	t.Helper()
	owners := []memory.Owner{memory.PersonalOwner(aiko.UserID), memory.PersonalOwner(ben.UserID)}
	if conv.GuildID != "" {
		owners = append(owners, memory.ServerOwner(conv.GuildID))
	}
	for _, o := range owners {
		if m, err := store.Memories.Get(context.Background(), o, id); err == nil {
			return m.Content
		}
	}
	t.Fatalf("memory #%d is in none of the conversation's scopes", id)
	return ""
}
