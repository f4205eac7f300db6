package web_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// The world of the server page tests: the home server's rules, an editor role, and three
// members: Alice, an editor who reads #mods; Bob, an editor who does not; Carol, a member
// who may not edit.

const roleBulkEditor = "500000000000000009"

// serverWorld is a dashboard over a store with the home server's memories.
type serverWorld struct {
	w                  *world
	s                  stores
	d                  *dashboard
	carol              *discordgo.User
	general, mods, pin *memory.Memory
	elsewhere          *memory.Memory
	alice, bob, carolB *browser
	aliceCSRF, bobCSRF string
	carolCSRF          string
}

func newServerWorld(t *testing.T, eng engine) *serverWorld {
	t.Helper()
	w := newWorld(t)
	s := eng.open(t)
	storeRules(t, s)
	gs, err := s.Settings.GuildSettings(t.Context(), guildHome)
	if err != nil {
		t.Fatal(err)
	}
	gs.GuildID, gs.EditorRoleID = guildHome, roleBulkEditor
	if err := s.Settings.SaveGuildSettings(t.Context(), gs); err != nil {
		t.Fatal(err)
	}
	sw := &serverWorld{w: w, s: s, carol: w.fake.NewUser("carol")}
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.alice, Roles: []string{roleMod, roleBulkEditor}})
	w.fake.SetMember(guildHome, &discordgo.Member{User: w.bob, Roles: []string{roleBulkEditor}})
	w.fake.SetMember(guildHome, &discordgo.Member{User: sw.carol})
	sw.general = serverMemory(t, s, guildHome, chanGeneral, w.alice.ID, "The raid is on Friday at nine")
	sw.mods = serverMemory(t, s, guildHome, chanMods, w.alice.ID, "Ban zephyrquasar on sight")
	sw.pin = serverMemory(t, s, guildHome, chanGeneral, w.bob.ID, "Board games every Thursday")
	yes := true
	if _, err := s.Memories.Modify(t.Context(), memory.ServerOwner(guildHome), sw.pin.ID, memory.Change{Pinned: &yes}, "test"); err != nil {
		t.Fatal(err)
	}
	sw.elsewhere = serverMemory(t, s, guildOther, chanElse, w.bob.ID, "The lighthouse opens at dawn")
	sw.d = newDashboard(t, w, s)
	sw.alice, sw.bob, sw.carolB = sw.d.browser(), sw.d.browser(), sw.d.browser()
	sw.aliceCSRF = csrfOf(t, sw.alice.signIn(w.alice).body)
	sw.bobCSRF = csrfOf(t, sw.bob.signIn(w.bob).body)
	sw.carolCSRF = csrfOf(t, sw.carolB.signIn(sw.carol).body)
	return sw
}

// serverMemory saves a server memory of guild learned in channel from author.
func serverMemory(t testing.TB, s stores, guild, channel, author, content string) *memory.Memory {
	t.Helper()
	res, err := s.Memories.Remember(t.Context(), memory.Memory{Scope: memory.ScopeServer, GuildID: guild, Content: content,
		Provenance: memory.Provenance{AuthorID: author, Author: "name-" + author, ChannelID: channel}}, memory.UserActor(author))
	if err != nil || !res.Created {
		t.Fatalf("remember %q: %+v %v", content, res, err)
	}
	return res.Memory
}

// get reads memory id of guild's server memory as the store has it, forgotten or not.
func (sw *serverWorld) get(t *testing.T, guild string, id int64) *memory.Memory {
	t.Helper()
	m, err := sw.s.Channels.Lookup(t.Context(), memory.ServerOwner(guild), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// home is the home server's page path.
const home = "/servers/" + guildHome

// preview posts a bulk preview of action on ids (or the filter, when ids is nil).
func preview(b *browser, csrf, action, value string, ids []int64, filter url.Values) response {
	form := url.Values{"csrf": {csrf}, "action": {action}, "value": {value}, "scope": {"selected"}}
	for _, id := range ids {
		form.Add("id", fmt.Sprint(id))
	}
	if ids == nil {
		form.Set("scope", "filter")
		for k, v := range filter {
			form[k] = v
		}
	}
	return b.post(home+"/bulk/preview", form)
}

var batchField = regexp.MustCompile(`name="batch" value="([^"]+)"`)

// batchOf returns the signed batch a preview or result page carries ("" if none).
func batchOf(page string) string {
	m := batchField.FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return m[1]
}

// testBatch is the batch's payload, as the tests forge or alter it.
type testBatch struct {
	Kind   string     `json:"k"`
	Guild  string     `json:"g"`
	Action string     `json:"a"`
	Value  string     `json:"v,omitempty"`
	Items  [][2]int64 `json:"i"`
}

// decodeBatch reads a sealed batch's payload without checking it.
func decodeBatch(t *testing.T, sealed string) testBatch {
	t.Helper()
	payload, _, _ := strings.Cut(sealed, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var b testBatch
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeBatch encodes b with the MAC sig (a forged batch signs it with the session's
// secret, which its member's page holds; a tampered one keeps the old MAC).
func encodeBatch(t *testing.T, b testBatch, secret string) (payload, signed string) {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	payload = base64.RawURLEncoding.EncodeToString(raw)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("kioku web bulk batch v1\x00"))
	mac.Write([]byte(payload))
	return payload, payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// postBatch posts a batch to apply or undo.
func postBatch(b *browser, csrf, step, sealed string) response {
	return b.post(home+"/bulk/"+step, url.Values{"csrf": {csrf}, "batch": {sealed}})
}
