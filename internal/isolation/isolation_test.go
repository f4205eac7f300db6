package isolation

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/llm"
	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/kioku-bot/kioku/tools"
)

var (
	seedFlag  = flag.Uint64("seed", 20260611, "seed of the isolation walk (a failure prints it)")
	stepsFlag = flag.Int("isolation.steps", 10000, "number of random steps, shared by the walks")
	walksFlag = flag.Int("isolation.walks", 2, "number of independent walks run side by side (walk i uses seed+i)")
	// pgStepsFlag is the PostgreSQL walks' share: each step there costs several round trips.
	pgStepsFlag = flag.Int("isolation.pgsteps", 8000, "number of random steps of the PostgreSQL walks")
)

// origin is who said a token and where, and so who may read it.
type origin struct {
	member  int
	place   int
	readers readers // empty for a message kioku must not keep (privacy full)
	msgID   string
	step    int
}

// sentMessage is a stored message a later step may delete.
type sentMessage struct {
	id, token string
	place     int
}

type harness struct {
	t     *testing.T
	ctx   context.Context
	seed  uint64
	rng   *rand.Rand
	clock *testkit.Clock

	store  bot.Store
	db     *oracle // the oracle's own connection to the same database
	short  *stm.Store
	engine *chat.Engine
	pipe   *pipeline.Pipeline
	bot    *bot.Bot
	// shard is a second process on the same store whose gateway holds none of the guilds
	// (another shard's): it decides from what the store keeps of their roles and channels.
	shard   *bot.Bot
	session *discordgo.Session
	// outage is each guild's state in the bot's gateway: up, unavailable (a Discord
	// outage), or gone (the window after a restart before the guild's data arrives).
	outage [numGuilds]outageState
	fake   *fakeopenai.Server
	adv    *adversary

	step  int
	steps int
	desc  string

	counter   int
	tokens    map[string]*origin
	sent      []sentMessage
	deleted   map[string]bool // deleted message ids
	privacy   [numMembers]memory.Privacy
	forgotten map[string]int // token → the member whose forget-me must have erased it
	// forgottenMsgs are the message ids of members who asked to be forgotten.
	forgottenMsgs map[string]bool
	// toolWriter is the member whose tool call (seen as a notice) last wrote a memory.
	toolWriter map[int64]int
	// laundered are tokens some memory held where their speaker's forget-me leaves it.
	laundered map[string]bool
	// inMemory are tokens some memory held at some point.
	inMemory map[string]bool

	kinds map[string]int
}

// TestIsolation runs the walks. They are independent worlds with their own store, bot and
// model, so they run in parallel: the work is almost all SQLite, one core per walk, and a
// 2-core CI machine finishes twice the steps in the same time. Each walk is deterministic
// for its seed.
func TestIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("the isolation walk takes about a minute")
	}
	walk(t, engineSQLite, *stepsFlag)
}

// TestIsolationPostgres runs the same walks on the PostgreSQL store, shorter: every step
// there is a few round trips to the server.
func TestIsolationPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("the isolation walk takes about a minute")
	}
	pgtest.URL(t)
	walk(t, enginePostgres, *pgStepsFlag)
}

func walk(t *testing.T, engine string, totalSteps int) {
	// The walk allocates a lot and keeps little; collecting less often is a large share of
	// its time under the race detector.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	walks := max(1, *walksFlag)
	for i := range walks {
		seed := *seedFlag + uint64(i)
		steps := totalSteps / walks
		if i < totalSteps%walks {
			steps++
		}
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, seed, engine)
			h.steps = steps
			start := time.Now()
			for h.step = 1; h.step <= steps; h.step++ {
				h.randomStep()
				h.afterStep()
			}
			t.Logf("seed %d: %d steps in %s; %v", h.seed, steps, time.Since(start).Round(time.Millisecond), h.kinds)
		})
	}
}

func newHarness(t *testing.T, seed uint64, engine string) *harness {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h := &harness{t: t, ctx: ctx, seed: seed, rng: rand.New(rand.NewPCG(seed, 1)),
		clock:  testkit.NewClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)),
		tokens: map[string]*origin{}, deleted: map[string]bool{}, forgotten: map[string]int{},
		forgottenMsgs: map[string]bool{}, toolWriter: map[int64]int{}, laundered: map[string]bool{}, inMemory: map[string]bool{}, kinds: map[string]int{}}
	for m := range h.privacy {
		h.privacy[m] = memory.PrivacyNormal
	}

	parts := openEngine(t, ctx, engine, h.clock.Now)
	store := parts.bot
	h.store, h.db = store, parts.db

	var err error
	h.short, err = stm.New(stm.Options{Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}

	// The model: one Default handler answers chat, extraction and decision requests.
	h.fake = fakeopenai.New(t)
	h.adv = &adversary{rng: rand.New(rand.NewPCG(seed, 2)), job: h.leasedJob}
	h.fake.Default(h.adv.answer)
	model, err := llm.New(llm.Config{BaseURL: h.fake.URL(), APIKey: fakeopenai.APIKey, ChatModel: "adversary",
		MaxRetries: llm.NoRetries, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}

	// The bot: a real one, with a session that never connects (a loopback address that
	// nothing serves, so a stray REST call fails at once instead of reaching Discord).
	// Its state is filled by hand, the way the gateway's GUILD_CREATE would.
	session, err := bot.NewSession("isolation-test-fake-token", "http://127.0.0.1:9/")
	if err != nil {
		t.Fatal(err)
	}
	session.StateEnabled = true
	session.State.TrackChannels, session.State.TrackThreads, session.State.TrackRoles, session.State.TrackMembers = true, true, true, true
	for g := range numGuilds {
		if err := session.State.GuildAdd(discordGuild(g)); err != nil {
			t.Fatal(err)
		}
		for m := range numMembers {
			if err := session.State.MemberAdd(&discordgo.Member{GuildID: guildID(g), Roles: rolesOf(g, m),
				User: &discordgo.User{ID: memberID(m), Username: displayNames[m]}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := store.Settings.SaveGuildSettings(ctx, memory.GuildSettings{GuildID: guildID(g), SelfTeaching: true,
			PipelineMode: memory.PipelineFull}); err != nil {
			t.Fatal(err)
		}
	}

	// Wired as cmd/kioku wires them (newPipeline, newEngine), driven by hand: the pipeline
	// in full mode with no budget (the walk is the only user), one job per Tick so every
	// pipeline request belongs to the one leased job; the engine with a small context
	// window (the prompt stays small, the checks cheap) and no rate limit.
	// What the owning process stored of the guilds' rules: all of guilds 0 and 1, and only
	// the channels of the last one, whose roles never reached the store.
	for g := range numGuilds {
		storeRules(t, ctx, store.Channels, discordGuild(g), g < numGuilds-1)
	}

	// Pipeline jobs are decided by either process, as the job queue hands them out.
	var b, shard *bot.Bot
	h.pipe, err = pipeline.New(pipeline.Config{
		Audience: func(ctx context.Context, g, c string) *memory.Audience {
			if h.rng.IntN(2) == 0 {
				return shard.ReplyAudience(ctx, g, c)
			}
			return b.ReplyAudience(ctx, g, c)
		},
		CallsPerHour:      -1,
		GuildShare:        -1,
		HighSignalPerHour: -1,
		MaxJobsPerTick:    1,
		WorkerID:          "isolation",
		Jitter:            func(d time.Duration) time.Duration { return d },
	}, pipelineDeps(parts.pipe, model, store.Now))
	if err != nil {
		t.Fatal(err)
	}
	h.engine, err = chat.New(chat.Config{ContextWindow: 2048, MaxOutputTokens: 256, TurnsPerMinute: 1 << 20,
		HistoryTurns: 12, Now: h.clock.Now}, chatDeps(parts.chat, h.short, model, h.pipe.OnTurn))
	if err != nil {
		t.Fatal(err)
	}
	b, err = bot.New(bot.Config{Session: session, Store: store, STM: h.short, Turner: h.engine, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h.bot, h.session = b, session
	shardSession, err := bot.NewSession("isolation-test-fake-token", "http://127.0.0.1:9/")
	if err != nil {
		t.Fatal(err)
	}
	shardSession.StateEnabled = true
	shard, err = bot.New(bot.Config{Session: shardSession, Store: store, STM: h.short, Turner: h.engine, Now: h.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	h.shard = shard
	return h
}

// leasedJob names the channel of the pipeline job being run (at most one: one per Tick).
func (h *harness) leasedJob() (string, string) {
	rows, err := h.db.Query(`SELECT payload FROM memory_jobs WHERE state = 'leased'`)
	if err != nil {
		return "", "error: " + err.Error()
	}
	defer rows.Close()
	var payloads []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return "", "error: " + err.Error()
		}
		payloads = append(payloads, p)
	}
	if len(payloads) != 1 {
		return "", fmt.Sprintf("%d leased jobs", len(payloads))
	}
	var job struct {
		GuildID   string `json:"guild_id"`
		ChannelID string `json:"channel_id"`
	}
	if err := json.Unmarshal([]byte(payloads[0]), &job); err != nil {
		return "", "error: " + err.Error()
	}
	return job.GuildID, job.ChannelID
}

// fail stops the walk at the first violation with everything needed to replay it.
func (h *harness) fail(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("isolation violated (seed %d, step %d: %s):\n%s\nreplay: go test ./internal/isolation/ -run TestIsolation -seed=%d -isolation.walks=1 -isolation.steps=%d",
		h.seed, h.step, h.desc, fmt.Sprintf(format, args...), h.seed, h.step)
}

func (h *harness) describe(tok string) string {
	o := h.tokens[tok]
	if o == nil {
		return fmt.Sprintf("token %s, which no message carried", tok)
	}
	return fmt.Sprintf("token %s said by %s (%s) in %s at step %d (message %s), readable by %s",
		tok, memberID(o.member), displayNames[o.member], placeName(o.place), o.step, o.msgID, o.readers)
}

// around quotes the text around the first occurrence of tok, for failure messages.
func around(text, tok string) string {
	i := strings.Index(text, tok)
	if i < 0 {
		return ""
	}
	lo, hi := max(0, i-300), min(len(text), i+len(tok)+100)
	return "\n…" + text[lo:hi] + "…"
}

// checkTokens is invariants 1 and 2 for text shown to audience: every token must have
// been readable by all of them where it was said, and none may be one a member had erased.
func (h *harness) checkTokens(where string, toks []string, audience readers, text ...string) {
	h.t.Helper()
	ctx := func(tok string) string {
		if len(text) == 0 {
			return ""
		}
		return around(text[0], tok)
	}
	for _, tok := range toks {
		o := h.tokens[tok]
		switch {
		case o == nil:
			h.fail("%s shows %s%s", where, h.describe(tok), ctx(tok))
		case !o.readers.covers(audience):
			h.fail("%s, read by %s, shows %s%s", where, audience, h.describe(tok), ctx(tok))
		}
		if m, ok := h.forgotten[tok]; ok {
			h.fail("%s shows %s, erased by %s's forget-me%s", where, h.describe(tok), memberID(m), ctx(tok))
		}
	}
}

// checkRequests checks the model requests made during a step: a chat request only shows
// what the readers of the turn's place may read, a pipeline request only what the readers
// of its job's channel may read.
func (h *harness) checkRequests(seen []seenRequest, turnPlace int) {
	h.t.Helper()
	for _, r := range seen {
		if r.kind == kindChat {
			if turnPlace < 0 {
				h.fail("a chat request outside a chat turn")
			}
			h.checkTokens(fmt.Sprintf("the chat request for a turn in %s", placeName(turnPlace)), r.tokens, readersOf(turnPlace), r.text)
			continue
		}
		p, ok := placeOfChannel(r.channel)
		if !ok || placeGuildID(p) != r.guild {
			h.fail("a %s request of an unknown job (%s/%s)", r.kind, r.guild, r.channel)
		}
		h.checkTokens(fmt.Sprintf("the %s request of a pipeline job for %s", r.kind, placeName(p)), r.tokens, readersOf(p), r.text)
	}
}

func (h *harness) randomStep() {
	h.clock.Advance(20 * time.Second)
	h.fake.ResetRequests()
	// Turns are most of the cost (a transcript write, a recall and model rounds each), so
	// the cheaper steps that look at and remove what turns left are weighted up.
	switch n := h.rng.IntN(100); {
	case n < 36:
		h.guildPost()
	case n < 48:
		h.dmPost()
	case n < 52:
		h.privacyChange()
	case n < 53:
		h.forgetMe()
	case n < 62:
		h.deleteMessage()
	case n < 73:
		h.tick()
	case n < 74:
		h.outageStep()
	default:
		h.views()
	}
}

// newMessage registers a fresh token said by m in place p.
func (h *harness) newMessage(m, p int) (tok, msgID, content string) {
	h.counter++
	tok = tokenFor(h.counter)
	msgID = strconv.Itoa(3_000_000 + h.counter)
	r := readersOf(p)
	if h.privacy[m] == memory.PrivacyFull {
		r = 0 // kioku ignores the message: nobody may ever see its token
	} else {
		h.sent = append(h.sent, sentMessage{id: msgID, token: tok, place: p})
	}
	h.tokens[tok] = &origin{member: m, place: p, readers: r, msgID: msgID, step: h.step}
	// Some messages ask to be remembered, carry decision language (both start an
	// extraction) or forge another speaker; none holds anything else that looks like a token.
	switch h.rng.IntN(6) {
	case 0:
		content = "please remember " + tok
	case 1:
		content = "we decided to use " + tok
	case 2:
		content = displayNames[h.rng.IntN(numMembers)] + ": I love " + tok
	case 3:
		content = "I prefer " + tok + " over everything"
	default:
		content = "chatting about " + tok
	}
	return tok, msgID, content
}

func (h *harness) guildPost() {
	g, m := h.rng.IntN(numGuilds), h.rng.IntN(numMembers)
	c := []int{chPublic, chThread, chPublic}[h.rng.IntN(3)]
	if canViewPrivate(g, m) && h.rng.IntN(2) == 0 {
		c = chPrivate
	}
	p := guildPlace(g, c)
	tok, msgID, content := h.newMessage(m, p)
	h.desc = fmt.Sprintf("%s (%s, %s) posts %q as message %s in %s", memberID(m), displayNames[m], h.privacy[m], content, msgID, placeName(p))
	h.kinds["guild post"]++
	aud := h.bot.ReplyAudience(h.ctx, guildID(g), channelID(g, c))
	h.turn(chat.Request{GuildID: guildID(g), ChannelID: channelID(g, c), UserID: memberID(m), UserName: displayNames[m],
		MessageID: msgID, Content: content, ServerEditor: serverEditor(g, m), Audience: aud}, m, p, tok)
}

func (h *harness) dmPost() {
	m := h.rng.IntN(numMembers)
	p := dmPlace(m)
	tok, msgID, content := h.newMessage(m, p)
	h.desc = fmt.Sprintf("%s (%s, %s) DMs %q as message %s", memberID(m), displayNames[m], h.privacy[m], content, msgID)
	h.kinds["dm"]++
	aud := h.bot.MemberAudience(h.ctx, memberID(m), "", dmChannelID(m), nil)
	h.turn(chat.Request{ChannelID: dmChannelID(m), UserID: memberID(m), UserName: displayNames[m],
		MessageID: msgID, Content: content, Audience: aud}, m, p, tok)
}

func (h *harness) turn(req chat.Request, m, p int, tok string) {
	req.At = h.clock.Now()
	reply, err := h.engine.Turn(h.ctx, req)
	if err != nil {
		h.t.Fatalf("seed %d step %d (%s): turn: %v", h.seed, h.step, h.desc, err)
	}
	h.checkRequests(h.adv.take(), p)
	where := readersOf(p)
	h.checkTokens("the reply in "+placeName(p), tokensIn(reply.Text), where)
	for _, n := range reply.Notices {
		h.checkTokens(fmt.Sprintf("the notice %q in %s", n.String(), placeName(p)), tokensIn(n.Content), where)
		if n.Action == tools.NoticeSaved || n.Action == tools.NoticeUpdated {
			h.toolWriter[n.MemoryID] = m
		}
		h.adv.setMaxID(n.MemoryID)
	}
	if len(reply.Notices) > 0 {
		h.observeMemories(req.At)
	}
}

func (h *harness) privacyChange() {
	m := h.rng.IntN(numMembers)
	level := []memory.Privacy{memory.PrivacyNormal, memory.PrivacyNormal, memory.PrivacyPartial, memory.PrivacyFull}[h.rng.IntN(4)]
	h.desc = fmt.Sprintf("%s sets privacy %s (was %s)", memberID(m), level, h.privacy[m])
	h.kinds["privacy"]++
	// What /privacy does (bot/settingscmd.go).
	if err := h.store.Settings.SetPrivacy(h.ctx, memberID(m), level); err != nil {
		h.t.Fatal(err)
	}
	if level == memory.PrivacyFull {
		h.short.ClearUser(memberID(m))
	}
	h.privacy[m] = level
}

// memRow is one memories row as the oracle reads it before a forget-me.
type memRow struct {
	id                             int64
	scope, userID, subject, source string
	content                        string
	evidence                       []string // authors of its evidence messages, per the oracle
}

func (h *harness) forgetMe() {
	a := h.rng.IntN(numMembers)
	aid := memberID(a)
	h.desc = fmt.Sprintf("%s (%s) asks to be forgotten", aid, displayNames[a])
	h.kinds["forget-me"]++

	// What stays, by SPEC §2, decided from the rows as they are before forget-me and the
	// oracle's own record of who wrote what: a memory stays unless it is the member's
	// personal memory, is about them (subject) or was learned only from their messages.
	// Their words in what stays are kept only where the product rules keep them: server
	// memories (which keep their content even when the member wrote them), memories of
	// other members that someone else saved deliberately, and pipeline memories that also
	// rest on someone else's messages (SPEC §2 removes only those whose only evidence is
	// the member's; a pipeline memory of another member rests on that member's words, even
	// when the model mixed someone else's into its text, and its evidence rows may be gone
	// with deleted messages). Their tool saves into another member's memory are not kept:
	// the only evidence of such a memory is the member's own message.
	//
	// A token of theirs that such a memory held at any time since is kept too (h.laundered),
	// even if that memory changed or went since: while it held the words, the model could
	// copy them from it into a summary or another memory, and nothing can tell those copies
	// from copies of any other memory's words.
	kept := map[string]bool{}
	stays := map[int64]bool{}
	for _, r := range h.memoryRows() {
		if h.staysAfterForgetMe(r, a) {
			stays[r.id] = true
			for _, tok := range tokensIn(r.content) {
				kept[tok] = true
			}
		}
	}
	// What a staying memory said before a change, in a turn or job that wrote and changed
	// it before the walk looked, is in its history as its own earlier text: kept with it.
	h.appliedHistory(func(id int64, text string) {
		if stays[id] {
			for _, tok := range tokensIn(text) {
				kept[tok] = true
			}
		}
	})
	// A proposal the pipeline recorded without applying it rests, like a pipeline memory,
	// on the messages it names: when they include someone else's, its words stay with it,
	// whatever the model mixed into them.
	h.proposalHistory(func(text string, speakers []string) {
		if restsOnOthers(speakers, aid) {
			for _, tok := range tokensIn(text) {
				kept[tok] = true
			}
		}
	})
	for tok, o := range h.tokens {
		if o.member == a && !kept[tok] && !h.laundered[tok] {
			if _, done := h.forgotten[tok]; !done {
				h.forgotten[tok] = a
			}
			h.forgottenMsgs[o.msgID] = true
		}
	}

	// What the confirm button does (bot/memorycmd.go forgetMePress).
	sum, err := h.store.Confirmations.PreviewForgetMe(h.ctx, aid)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.store.Confirmations.ConfirmForgetMe(h.ctx, aid, sum.Token); err != nil {
		h.t.Fatal(err)
	}
	h.short.ClearUser(aid)
	h.checkTables()
}

// appliedHistory calls fn with the texts of every history row that records a change its
// memory went through (not a proposal it was only compared with).
func (h *harness) appliedHistory(fn func(id int64, text string)) {
	rows, err := h.db.QueryContext(h.ctx, `SELECT memory_id, old_content || ' ' || new_content FROM memory_history
		WHERE memory_id IS NOT NULL AND action IN ('create', 'update', 'delete', 'recover', 'import')`)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			h.t.Fatal(err)
		}
		fn(id, text)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
}

// proposalHistory calls fn with the text of every history row of a proposal that was not
// applied, and the authors of the messages it names as its evidence.
func (h *harness) proposalHistory(fn func(text string, speakers []string)) {
	rows, err := h.db.QueryContext(h.ctx, `SELECT old_content || ' ' || new_content, metadata FROM memory_history
		WHERE action IN ('skipped', 'shadow', 'blocked', 'review_needed', 'deduped')`)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var text, metadata string
		if err := rows.Scan(&text, &metadata); err != nil {
			h.t.Fatal(err)
		}
		var meta struct {
			Evidence []struct {
				UserID string `json:"user_id"`
			} `json:"evidence"`
		}
		_ = json.Unmarshal([]byte(metadata), &meta) // a row without evidence names nobody
		speakers := make([]string, len(meta.Evidence))
		for i, e := range meta.Evidence {
			speakers[i] = e.UserID
		}
		fn(text, speakers)
	}
	if err := rows.Err(); err != nil {
		h.t.Fatal(err)
	}
}

// staysAfterForgetMe reports whether r stays, words of member a included, when a asks to
// be forgotten (see forgetMe).
func (h *harness) staysAfterForgetMe(r memRow, a int) bool {
	aid := memberID(a)
	onlyTheirs := len(r.evidence) > 0
	for _, who := range r.evidence {
		onlyTheirs = onlyTheirs && who == aid
	}
	switch {
	case r.scope == string(memory.ScopePersonal) && r.userID == aid, r.subject == aid, onlyTheirs:
		return false
	case r.scope == string(memory.ScopePersonal):
		// Their tool save into another member's memory goes, unless the pipeline has since
		// rewritten it from someone else's messages: then it rests on those (as any
		// pipeline memory of another member does).
		if w, ok := h.toolWriter[r.id]; r.source == string(memory.SourceTool) && ok && w == a && !restsOnOthers(r.evidence, aid) {
			return false
		}
	}
	return true
}

// restsOnOthers reports whether any of a memory's evidence messages is someone else's
// than member aid's.
func restsOnOthers(evidence []string, aid string) bool {
	for _, who := range evidence {
		if who != aid {
			return true
		}
	}
	return false
}

// observeMemories records, for the memories written since the step began, which tokens
// they carry that would stay after their speaker's forget-me (see forgetMe).
func (h *harness) observeMemories(since time.Time) {
	for _, r := range h.memoryRowsWhere(`WHERE updated_at >= ?`, since.UnixMilli()) {
		for _, tok := range tokensIn(r.content) {
			h.inMemory[tok] = true
			if o := h.tokens[tok]; o != nil && h.staysAfterForgetMe(r, o.member) {
				h.laundered[tok] = true
			}
		}
	}
}

// memoryRows reads every memory row, live and forgotten, with its evidence authors.
func (h *harness) memoryRows() []memRow { return h.memoryRowsWhere("") }

func (h *harness) memoryRowsWhere(where string, args ...any) []memRow {
	rows, err := h.db.QueryContext(h.ctx, `SELECT id, scope, user_id, subject_id, source, content FROM memories `+where, args...)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []memRow
	byID := map[int64]int{}
	for rows.Next() {
		var r memRow
		if err := rows.Scan(&r.id, &r.scope, &r.userID, &r.subject, &r.source, &r.content); err != nil {
			h.t.Fatal(err)
		}
		byID[r.id] = len(out)
		out = append(out, r)
	}
	rows.Close()
	if len(out) == 0 {
		return nil
	}
	ev, err := h.db.QueryContext(h.ctx, `SELECT memory_id, message_id FROM memory_evidence`)
	if err != nil {
		h.t.Fatal(err)
	}
	defer ev.Close()
	msgAuthor := map[string]string{}
	for _, o := range h.tokens {
		msgAuthor[o.msgID] = memberID(o.member)
	}
	for ev.Next() {
		var id int64
		var msg string
		if err := ev.Scan(&id, &msg); err != nil {
			h.t.Fatal(err)
		}
		if i, ok := byID[id]; ok {
			who, known := msgAuthor[msg]
			if !known {
				who = "unknown message " + msg
			}
			out[i].evidence = append(out[i].evidence, who)
		}
	}
	return out
}

// checkTables is invariant 2 on the database: no erased token in the transcript, job
// payloads or memories, and no evidence row pointing at a forgotten member's message.
func (h *harness) checkTables() {
	h.t.Helper()
	for _, q := range []struct{ what, query string }{
		{"the transcripts table", `SELECT content FROM transcripts`},
		{"a job payload", `SELECT payload || ' ' || coalesce(last_error, '') FROM memory_jobs`},
		{"the memories table", `SELECT content || ' [row: #' || id || ' ' || scope || ' user=' || user_id || ' subject=' ||
			subject_id || ' source=' || source || ' author=' || author_id || ' channel=' || channel_id ||
			' deleted=' || (deleted_at IS NOT NULL) || ' evidence=' || coalesce((SELECT ` + h.db.joined(`message_id || '/' || user_id`) + `
			FROM memory_evidence e WHERE e.memory_id = memories.id), '') || ']' FROM memories`},
	} {
		rows, err := h.db.QueryContext(h.ctx, q.query)
		if err != nil {
			h.t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				h.t.Fatal(err)
			}
			scanTokens(s, func(tok string) {
				if m, ok := h.forgotten[tok]; ok {
					rows.Close()
					h.fail("%s holds %s, erased by %s's forget-me, in %q", q.what, h.describe(tok), memberID(m), s)
				}
			})
		}
		rows.Close()
	}
	rows, err := h.db.QueryContext(h.ctx, `SELECT message_id FROM memory_evidence`)
	if err != nil {
		h.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			h.t.Fatal(err)
		}
		if h.forgottenMsgs[id] {
			h.fail("memory_evidence still names message %s of a forgotten member", id)
		}
	}
}

func (h *harness) deleteMessage() {
	if len(h.sent) == 0 {
		h.desc = "no message to delete"
		return
	}
	msg := h.sent[h.rng.IntN(len(h.sent))]
	h.desc = fmt.Sprintf("message %s (%s) in %s is deleted", msg.id, msg.token, placeName(msg.place))
	h.kinds["delete"]++
	h.deleted[msg.id] = true
	h.bot.OnMessageDelete(nil, &discordgo.MessageDelete{Message: &discordgo.Message{ID: msg.id,
		ChannelID: placeChannel(msg.place), GuildID: placeGuildID(msg.place)}})

	// Invariant 3: gone from the transcript and from short-term memory at once. A summary
	// may still hold the token only if a memory held it at some point: deliberate saves
	// stay (SPEC §2), and a summary may quote them, even after the memory changed.
	var n int
	if err := h.db.QueryRowContext(h.ctx, `SELECT count(*) FROM transcripts WHERE message_id = ? OR `+h.db.contains("content"),
		msg.id, msg.token).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	if n > 0 {
		h.fail("the transcript still holds deleted message %s (%s)", msg.id, h.describe(msg.token))
	}
	inMemory := h.inMemory[msg.token]
	if !inMemory {
		if err := h.db.QueryRowContext(h.ctx, `SELECT EXISTS (SELECT 1 FROM memories WHERE `+h.db.contains("content")+`)`,
			msg.token).Scan(&inMemory); err != nil {
			h.t.Fatal(err)
		}
	}
	h.eachSTM(func(e stm.Entry) {
		for _, sm := range e.Messages {
			if sm.MessageID == msg.id || strings.Contains(sm.Content, msg.token) {
				h.fail("short-term memory %s still holds deleted message %s (%s)", e.Key, msg.id, h.describe(msg.token))
			}
		}
		if !inMemory && strings.Contains(e.Summary, msg.token) {
			h.fail("the short-term summary of %s still quotes deleted message %s (%s)", e.Key, msg.id, h.describe(msg.token))
		}
	})
	h.checkPipelineEvidence()
}

// checkPipelineEvidence is the rest of invariant 3: no live pipeline memory rests only on
// deleted messages.
func (h *harness) checkPipelineEvidence() {
	h.t.Helper()
	if len(h.deleted) == 0 {
		return
	}
	ids := make([]string, 0, len(h.deleted))
	for id := range h.deleted {
		ids = append(ids, id)
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var id int64
	err := h.db.QueryRowContext(h.ctx, `SELECT m.id FROM memories m WHERE m.deleted_at IS NULL AND m.source = 'pipeline'
		AND EXISTS (SELECT 1 FROM memory_evidence e WHERE e.memory_id = m.id)
		AND NOT EXISTS (SELECT 1 FROM memory_evidence e WHERE e.memory_id = m.id
			AND e.message_id NOT IN (`+placeholders(len(args))+`)) LIMIT 1`, args...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return
	}
	if err != nil {
		h.t.Fatal(err)
	}
	h.fail("pipeline memory #%d is live though every message it was learned from is deleted", id)
}

func (h *harness) tick() {
	h.desc = "the pipeline runs one job"
	h.kinds["tick"]++
	began := h.clock.Now()
	defer h.observeMemories(began)
	if _, err := h.pipe.Tick(h.ctx); err != nil {
		h.t.Fatalf("seed %d step %d: tick: %v", h.seed, h.step, err)
	}
	h.checkRequests(h.adv.take(), -1)
	h.checkPipelineEvidence()
	var maxID int64
	if err := h.db.QueryRowContext(h.ctx, `SELECT coalesce(max(id), 0) FROM memories`).Scan(&maxID); err != nil {
		h.t.Fatal(err)
	}
	h.adv.setMaxID(maxID)
}

// views are what a member's /memory list, search and export show them (bot/memorycmd.go,
// bot/transfer.go): ephemeral, so every memory in them must be readable by that member.
func (h *harness) views() {
	m := h.rng.IntN(numMembers)
	mid := memberID(m)
	guild, channel, g := "", dmChannelID(m), -1
	var roles []string
	where := "in a DM"
	if h.rng.IntN(2) == 0 {
		g = h.rng.IntN(numGuilds)
		c := chPublic
		if canViewPrivate(g, m) && h.rng.IntN(2) == 0 {
			c = chPrivate
		}
		guild, channel, roles = guildID(g), channelID(g, c), rolesOf(g, m)
		where = "in " + placeName(guildPlace(g, c))
	}
	aud := h.bot.MemberAudience(h.ctx, mid, guild, channel, roles)
	owner := memory.PersonalOwner(mid)
	scope := "personal"
	if g >= 0 && h.rng.IntN(2) == 0 {
		owner, scope = memory.ServerOwner(guild), "server"
	}
	query := ""
	if len(h.sent) > 0 {
		query = h.sent[h.rng.IntN(len(h.sent))].token
	}
	var mems []*memory.Memory
	var what string
	switch k := h.rng.IntN(5); {
	case k == 4 && g >= 0:
		h.kinds["views"]++
		h.statusView(m, g, aud, where)
		return
	case k == 3:
		h.kinds["views"]++
		h.historyView(m, owner, aud, fmt.Sprintf("%s memory %s", scope, where))
		return
	case k == 0:
		what = "list"
		list, _, err := h.store.Memories.List(h.ctx, owner, memory.ListOptions{Limit: 10, Audience: aud})
		if err != nil {
			h.t.Fatal(err)
		}
		mems = list
	case k == 1 && query != "":
		what = "search " + query
		res, err := h.store.Recall.Search(h.ctx, memory.SearchQuery{Text: query, Owners: []memory.Owner{owner}, Limit: 10, Audience: aud})
		if err != nil {
			h.t.Fatal(err)
		}
		for _, r := range res {
			mems = append(mems, r.Memory)
		}
	default:
		if owner.Scope == memory.ScopeServer && !serverEditor(g, m) {
			owner, scope = memory.PersonalOwner(mid), "personal" // server export is an editor's
		}
		what = "export"
		f, err := h.store.Transfer.ExportWithin(h.ctx, owner, aud)
		if err != nil {
			h.t.Fatal(err)
		}
		data, err := json.Marshal(f)
		if err != nil {
			h.t.Fatal(err)
		}
		h.desc = fmt.Sprintf("%s views /memory %s scope:%s %s", mid, what, scope, where)
		h.kinds["views"]++
		h.checkTokens(fmt.Sprintf("%s's export of %s memory %s", mid, scope, where), tokensIn(string(data)), 1<<m)
		return
	}
	h.desc = fmt.Sprintf("%s views /memory %s scope:%s %s", mid, what, scope, where)
	h.kinds["views"]++
	for _, mem := range mems {
		h.checkTokens(fmt.Sprintf("%s's /memory %s of %s memory %s (#%d)", mid, what, scope, where, mem.ID), tokensIn(mem.Content), 1<<m)
	}
}

// historyView is what /memory history shows member m of a memory of owner, named by an id
// a hostile member may pick at will (bot/memorycmd.go memoryHistory): nothing of a memory
// they cannot view, and of the rest of its rows only text said where they may read.
func (h *harness) historyView(m int, owner memory.Owner, aud *memory.Audience, which string) {
	mid := memberID(m)
	// Any id at all, or more often one of the memories they can view, whose rows may
	// quote what was said elsewhere.
	id := h.rng.Int64N(h.adv.knownMaxID()+1) + 1
	if h.rng.IntN(4) > 0 {
		list, _, err := h.store.Memories.List(h.ctx, owner, memory.ListOptions{Limit: 50, Audience: aud})
		if err != nil {
			h.t.Fatal(err)
		}
		if len(list) > 0 {
			id = list[h.rng.IntN(len(list))].ID
		}
	}
	h.desc = fmt.Sprintf("%s views /memory history of #%d, %s", mid, id, which)
	mem, err := h.store.Channels.Lookup(h.ctx, owner, id)
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return
	}
	if err != nil {
		h.t.Fatal(err)
	}
	if !aud.Allows(mem) {
		return // refused as "not found" (requireVisible)
	}
	events, err := h.store.Memories.History(h.ctx, owner, id)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, ev := range events {
		shown, _ := ev.ShownTo(aud)
		text := shown.OldContent + " " + shown.NewContent + " " + shown.Reason
		h.checkTokens(fmt.Sprintf("%s's /memory history of %s (#%d, row %d %s)", mid, which, id, ev.ID, ev.Action),
			tokensIn(text), 1<<m, text)
	}
}

// eachSTM visits every short-term entry the world can have.
func (h *harness) eachSTM(fn func(stm.Entry)) {
	visit := func(k stm.Key) {
		if e, ok := h.short.Get(k); ok {
			fn(e)
		}
	}
	for p := range numGuildPlaces {
		visit(stm.ChannelKey(placeGuildID(p), placeChannel(p)))
		for m := range numMembers {
			visit(stm.UserKey(placeGuildID(p), placeChannel(p), memberID(m)))
		}
	}
	for m := range numMembers {
		visit(stm.UserKey("", dmChannelID(m), memberID(m)))
	}
}

// afterStep runs the checks that hold after every step: nothing erased in short-term
// memory (cheap, in process), and now and then the full table scan.
func (h *harness) afterStep() {
	h.t.Helper()
	if len(h.forgotten) > 0 {
		h.eachSTM(func(e stm.Entry) {
			check := func(s, what string) {
				scanTokens(s, func(tok string) {
					if m, ok := h.forgotten[tok]; ok {
						h.fail("short-term %s of %s holds %s, erased by %s's forget-me", what, e.Key, h.describe(tok), memberID(m))
					}
				})
			}
			check(e.Summary, "summary")
			for _, sm := range e.Messages {
				check(sm.Content, "message")
			}
		})
	}
	if h.step%500 == 0 {
		h.checkTables()
	}
}
