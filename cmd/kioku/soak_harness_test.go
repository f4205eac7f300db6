//go:build soak

package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// soak is the state of one run shared by the conversations, the collector, the model and
// the faults.
type soak struct {
	t      *testing.T
	fake   *fakediscord.Fake
	ai     *fakeopenai.Server
	logs   *soakLogCounts
	shards int
	// convs are the conversations, then one probe per shard (probes[shard]), which the
	// faults use to see that a shard answers again.
	convs  []*soakConv
	probes []*soakConv
	guilds []string // every guild of the run, the probes' included
	warm   sync.WaitGroup
	stop   chan struct{} // closed when the run is over: waits and retries give up
	began  time.Time

	mu      sync.Mutex
	pending map[string]*soakPending // message id → waiting for its reply
	delays  map[string]time.Duration
	// Histograms, not samples: the test's own bookkeeping must not grow with the run, or
	// it would count against the heap bound.
	overhead, latency                            soakHistogram
	turns, duplicates, late, refused             int
	killedInFlight, heldWhileDown                int
	forgetMes, deletes                           int
	errs                                         map[string]int // what went wrong → how often
	waiters                                      map[string]chan *fakediscord.SentMessage
	recentDeletes                                []soakRecentDelete
	faultMu                                      sync.Mutex
	faults                                       []*soakFaultRun
	modelDown                                    atomic.Bool
	chatCalls, extractCalls, decideCalls, failed atomic.Int64
	// seen is the mark up to which the collector has looked at the fake Discord's requests.
	seen atomic.Int64
}

func newSoak(t *testing.T, shards int) *soak {
	s := &soak{t: t, fake: fakediscord.New(t), ai: fakeopenai.New(t), logs: newSoakLogCounts(), shards: shards,
		stop: make(chan struct{}), pending: map[string]*soakPending{}, delays: map[string]time.Duration{},
		errs: map[string]int{}, waiters: map[string]chan *fakediscord.SentMessage{}}
	s.ai.Default(s.model)
	s.logs.explain = func(at time.Time) *soakFaultRun { return s.faultAt(time.Time{}, at) }
	return s
}

// setUp makes the guilds (two channels each, spread over the shards), the conversations
// (conversation c talks in guild c%guilds, in one of its channels, and every tenth one in
// a DM, which is shard 0's) and a probe per shard, in a channel of its own.
func (s *soak) setUp(convs, guilds int) {
	type guild struct {
		id       string
		channels [2]string
		shard    int
	}
	var gs []guild
	for g := range guilds + s.shards {
		// The conversations' guilds take the shards in turn; then one probe guild a shard.
		shard, seq := g%s.shards, 100+g
		if g >= guilds {
			shard, seq = g-guilds, 900+g
		}
		id, _ := shardGuild(seq, shard, s.shards)
		n := guild{id: id, shard: shard}
		s.fake.SetGuild(&discordgo.Guild{ID: id, Name: fmt.Sprintf("soak %d", g), OwnerID: "1"})
		for k := range n.channels {
			n.channels[k] = fmt.Sprint(parseID(id) + uint64(k) + 1)
			s.fake.SetChannel(&discordgo.Channel{ID: n.channels[k], GuildID: id, Type: discordgo.ChannelTypeGuildText,
				Name: fmt.Sprintf("general-%d", k)})
		}
		gs = append(gs, n)
	}
	for _, g := range gs {
		s.guilds = append(s.guilds, g.id)
	}
	for c := range convs + s.shards {
		conv := &soakConv{id: c, user: s.fake.NewUser(fmt.Sprintf("member%d", c)), dm: fmt.Sprintf("5%017d", c)}
		switch {
		case c >= convs: // the probe of shard c-convs, alone in its guild
			g := gs[guilds+c-convs]
			conv.place = soakPlace{guild: g.id, channel: g.channels[0], shard: g.shard}
			s.probes = append(s.probes, conv)
		case c%10 == 9:
			conv.place = soakPlace{channel: conv.dm}
		default:
			g := gs[c%guilds]
			conv.place = soakPlace{guild: g.id, channel: g.channels[(c/guilds)%2], shard: g.shard}
		}
		s.convs = append(s.convs, conv)
	}
}

// parseID reads a snowflake.
func parseID(id string) uint64 {
	var n uint64
	fmt.Sscan(id, &n)
	return n
}

// conversations are the convs that talk on their own (not the probes).
func (s *soak) conversations() []*soakConv { return s.convs[:len(s.convs)-s.shards] }

func (s *soak) fail(what string) {
	s.mu.Lock()
	s.errs[what]++
	s.mu.Unlock()
}

// collect follows every request the bot makes to the fake Discord: it matches replies to
// the messages they answer and interaction answers to their waiters, and drops what it has
// looked at from the fakes' records.
func (s *soak) collect(ctx context.Context) {
	forgotAt := 0
	_, _ = s.fake.WaitForSince(ctx, 0, func(r fakediscord.Request) bool {
		if r.Status >= 400 {
			s.fail(fmt.Sprintf("Discord answered %d to %s %s", r.Status, r.Method, routeOf(r.Path)))
		}
		switch {
		case r.Method == "POST" && strings.HasPrefix(r.Path, "/channels/") && strings.HasSuffix(r.Path, "/messages") && r.Message != nil:
			s.reply(r)
		case r.Method == "POST" && strings.HasPrefix(r.Path, "/interactions/") && strings.HasSuffix(r.Path, "/callback"):
			s.callback(r)
		case r.Method == "PATCH" && strings.HasPrefix(r.Path, "/webhooks/") && strings.HasSuffix(r.Path, "/messages/@original"):
			s.answered(pathPart(r.Path, 3), r.Message)
		}
		s.seen.Store(int64(r.Index + 1))
		if r.Index+1-forgotAt >= soakForgetEvery {
			forgotAt = r.Index + 1
			s.fake.Forget(forgotAt)
			s.ai.ResetRequests()
		}
		return false
	})
}

// pathPart is the i-th part of a path split on "/" (0 is the empty part before the first).
func pathPart(path string, i int) string {
	parts := strings.Split(path, "/")
	if i < len(parts) {
		return parts[i]
	}
	return ""
}

// snowflakeID matches the ids in an API path.
var snowflakeID = regexp.MustCompile(`\d{5,}`)

// routeOf replaces the ids in an API path, so errors group by route.
func routeOf(path string) string { return snowflakeID.ReplaceAllString(path, "{id}") }

// reply records a reply the bot posted: an answer when it names its message's topic, a
// refusal when it apologises while a fault explains it, an error otherwise.
func (s *soak) reply(r fakediscord.Request) {
	ref := r.Message.Reference
	if ref == nil || ref.MessageID == "" {
		s.fail("reply without a message reference")
		return
	}
	s.mu.Lock()
	p, ok := s.pending[ref.MessageID]
	if !ok {
		// Every message is pending from before its dispatch until its first reply, so
		// this is a second reply (or one to a message the soak never sent).
		s.duplicates++
		s.mu.Unlock()
		return
	}
	delete(s.pending, ref.MessageID)
	if p.late {
		s.late++
	}
	delay := s.delays[p.token]
	delete(s.delays, p.token)
	sent := p.sent
	s.mu.Unlock()

	outcome := outcomeAnswered
	if !strings.Contains(r.Message.Content, "topic "+p.token) {
		outcome = outcomeRefused
		if f := s.faultAt(sent, r.At); f != nil {
			f.refusedTurn()
		} else {
			s.fail(fmt.Sprintf("reply does not answer its message and no fault explains it: %.60q", r.Message.Content))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p.outcome = outcome
	switch {
	case outcome == outcomeRefused:
		s.refused++
	case p.measure:
		latency := r.At.Sub(sent)
		s.turns++
		s.latency.add(latency)
		s.overhead.add(latency - delay)
	}
	close(p.done)
}

// callback hands an interaction's answer to its waiter, unless it is deferred: then the
// edit of the original message is the answer.
func (s *soak) callback(r fakediscord.Request) {
	var body struct {
		Type discordgo.InteractionResponseType `json:"type"`
	}
	_ = r.Decode(&body)
	if body.Type == discordgo.InteractionResponseDeferredChannelMessageWithSource ||
		body.Type == discordgo.InteractionResponseDeferredMessageUpdate {
		return
	}
	s.answered(pathPart(r.Path, 3), r.Message)
}

func (s *soak) answered(token string, m *fakediscord.SentMessage) {
	s.mu.Lock()
	ch, ok := s.waiters[token]
	delete(s.waiters, token)
	s.mu.Unlock()
	if ok {
		ch <- m
	}
}

// interact dispatches an interaction and returns the text of its answer (content and
// embeds) with the custom IDs of its buttons; ok is false when none came in time.
func (s *soak) interact(i *discordgo.Interaction) (text string, buttons []string, ok bool) {
	ch := make(chan *fakediscord.SentMessage, 1)
	s.mu.Lock()
	s.waiters[i.Token] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiters, i.Token)
		s.mu.Unlock()
	}()
	if !s.dispatch(func() error { return s.fake.DispatchInteraction(i) }) {
		return "", nil, false
	}
	select {
	case m := <-ch:
		if m == nil {
			return "", nil, false
		}
		return (reply{Msg: m}).Text(), (reply{Msg: m}).Buttons(), true
	case <-time.After(soakInteractWait):
		return "", nil, false
	case <-s.stop:
		return "", nil, false
	}
}
