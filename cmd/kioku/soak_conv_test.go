//go:build soak

package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/internal/testkit/fakediscord"
)

// soakPlace is where a conversation talks: a guild channel, or a DM (guild "").
type soakPlace struct {
	guild, channel string
	shard          int // the shard Discord sends its events to
}

// soakConv is one member talking to the bot in one place, turn after turn. Its per-turn
// state is two bytes a turn, so the test's bookkeeping stays small beside the bot's.
type soakConv struct {
	id    int
	place soakPlace
	dm    string // the member's DM channel, for commands through shard 0
	user  *discordgo.User

	// forgetWanted asks the conversation for a forget-me before its next turn.
	forgetWanted atomic.Bool

	mu      sync.Mutex
	sentAt  time.Time    // when the current turn's message went out
	turns   []soakTurn   // by turn number
	forgets []soakForget // the member's forget-mes, oldest first
}

// soakTurn is what the run did with one turn of a conversation.
type soakTurn struct{ attempts, flags uint8 }

const (
	// turnToolSaved: the chat model was told the turn's memory was saved.
	turnToolSaved uint8 = 1 << iota
	// turnExtracted: an extraction returned the turn's fact.
	turnExtracted
	// turnDeleted: the member deleted the turn's message.
	turnDeleted
	// turnDeleteAtRisk: the delete reached a process that was killed moments later, so
	// it may have died with it (Discord does not send it again).
	turnDeleteAtRisk
)

// soakForget is one forget-me of a conversation's member.
type soakForget struct {
	before int       // the turns before this one were forgotten
	at     time.Time // when the forget-me was confirmed
}

func (c *soakConv) turnLocked(k int) *soakTurn {
	for len(c.turns) <= k {
		c.turns = append(c.turns, soakTurn{})
	}
	return &c.turns[k]
}

// sending records that turn k's message goes out (again) now.
func (c *soakConv) sending(k int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.turnLocked(k)
	t.attempts = min(t.attempts+1, 255)
	c.sentAt = time.Now()
}

func (c *soakConv) setFlag(k int, f uint8) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turnLocked(k).flags |= f
}

// turn returns what the run did with turn k.
func (c *soakConv) turn(k int) soakTurn {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k < 0 || k >= len(c.turns) {
		return soakTurn{}
	}
	return c.turns[k]
}

// currentSent is when the turn now running was sent.
func (c *soakConv) currentSent() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sentAt
}

// forgotten reports whether turn k's words were forgotten by a forget-me confirmed before
// at: a prompt built for a turn sent at at must not hold them.
func (c *soakConv) forgotten(k int, at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.forgets {
		if k < f.before && f.at.Before(at) {
			return true
		}
	}
	return false
}

// forgottenEver reports whether turn k was forgotten by any forget-me of the run.
func (c *soakConv) forgottenEver(k int) bool { return c.forgotten(k, time.Now().Add(time.Hour)) }

// savedSinceForget reports whether a turn before k-1 had its memory saved since the last
// forget-me, so a search for the member's memories must find one (the turn just before
// is left out: a memory enters the keyword index up to 50 ms after its write).
func (c *soakConv) savedSinceForget(k int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	from := 0
	if n := len(c.forgets); n > 0 {
		from = c.forgets[n-1].before
	}
	for i := from; i < min(k-1, len(c.turns)); i++ {
		if c.turns[i].flags&turnToolSaved != 0 {
			return true
		}
	}
	return false
}

func (c *soakConv) addForget(before int, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets = append(c.forgets, soakForget{before: before, at: at})
}

// soakOutcome is how a message of the soak ended.
type soakOutcome int

const (
	outcomeNone     soakOutcome = iota // not sent, or the sender stopped waiting
	outcomeAnswered                    // a reply that answers the message
	outcomeRefused                     // a reply that apologises (a fault explains it)
	outcomeKilled                      // its process was killed before it answered
)

// soakPending is one dispatched message waiting for its reply.
type soakPending struct {
	conv    *soakConv
	token   string
	sent    time.Time
	measure bool
	done    chan struct{}
	outcome soakOutcome
	late    bool // the sender stopped waiting before the reply came
}

// message is the member's message of a turn in its place: a mention in a guild channel.
func (s *soak) message(c *soakConv, text string) *discordgo.Message {
	if c.place.guild == "" {
		return s.fake.DMMessage(c.place.channel, c.user, text)
	}
	bot := s.fake.BotUser()
	return s.fake.GuildMessage(c.place.guild, c.place.channel, c.user, "<@"+bot.ID+"> "+text, bot)
}

// converse runs conversation c: warm-up turns, then turns until the deadline, doing a
// forget-me whenever one is asked for.
func (s *soak) converse(c *soakConv, release <-chan struct{}, deadline func() time.Time) int {
	k := 0
	for ; k < soakWarmupTurns; k++ {
		s.turn(c, k, false)
	}
	s.warm.Done()
	<-release
	for ; time.Now().Before(deadline()); k++ {
		if c.forgetWanted.CompareAndSwap(true, false) {
			s.forgetMe(c, k)
		}
		s.turn(c, k, true)
	}
	return k
}

// turn sends turn k of c until it is answered: a member told to try again later, or never
// answered because the process died, asks again.
func (s *soak) turn(c *soakConv, k int, measure bool) soakOutcome {
	token := fmt.Sprintf("%d-%d", c.id, k)
	text := fmt.Sprintf("I like topic %s a lot", token)
	for attempt := 1; ; attempt++ {
		m := s.message(c, text)
		out := s.send(c, k, token, m, measure)
		if out == outcomeAnswered && attempt == 1 && k%soakDeleteEvery == soakDeleteTurn {
			s.deleteMessage(c, k, m)
		}
		if out != outcomeRefused && out != outcomeKilled {
			return out
		}
		if attempt >= soakMaxAttempts {
			s.fail(fmt.Sprintf("a turn was refused or lost %d times in a row", attempt))
			return out
		}
		select {
		case <-s.stop:
			return out
		case <-time.After(soakRetryWait):
		}
	}
}

// send dispatches the message of turn k, named token, and waits for its reply.
func (s *soak) send(c *soakConv, k int, token string, m *discordgo.Message, measure bool) soakOutcome {
	p := &soakPending{conv: c, token: token, measure: measure, done: make(chan struct{})}
	s.mu.Lock()
	s.pending[m.ID] = p
	s.mu.Unlock()
	sent := s.dispatch(func() error {
		c.sending(k)
		s.mu.Lock()
		p.sent = time.Now()
		s.mu.Unlock()
		return s.fake.DispatchMessage(m)
	})
	if !sent {
		s.mu.Lock()
		delete(s.pending, m.ID)
		s.mu.Unlock()
		return outcomeNone
	}
	select {
	case <-p.done:
	case <-time.After(soakReplyWait):
		s.mu.Lock()
		p.late = true
		s.mu.Unlock()
		return outcomeNone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return p.outcome
}

// dispatch runs send until the fake Discord takes the event. While the process of the
// event's shard is down (killed, restarting) there is nobody to deliver it to, so the
// member waits and sends again; it gives up when the run stops, or when the shard stays
// down far longer than a fault may last.
func (s *soak) dispatch(send func() error) bool {
	var held time.Time
	for {
		err := send()
		if err == nil {
			return true
		}
		if !errors.Is(err, fakediscord.ErrNoGateway) {
			s.fail("dispatch failed: " + err.Error())
			return false
		}
		if held.IsZero() {
			held = time.Now()
			s.mu.Lock()
			s.heldWhileDown++
			s.mu.Unlock()
		}
		if time.Since(held) > 2*soakRecoveryBound {
			s.fail(fmt.Sprintf("an event waited over %v for its shard's process to be back", 2*soakRecoveryBound))
			return false
		}
		select {
		case <-s.stop:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// deleteMessage deletes turn k's message, as its member does now and then after the
// reply. Only single-attempt turns without a saved memory are deleted, so the turn's fact
// can come from nowhere else: it must not be remembered at the end.
func (s *soak) deleteMessage(c *soakConv, k int, m *discordgo.Message) {
	if !s.dispatch(func() error { return s.fake.DispatchMessageDelete(m.GuildID, m.ChannelID, m.ID) }) {
		return
	}
	c.setFlag(k, turnDeleted)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes++
	now := time.Now()
	keep := s.recentDeletes[:0]
	for _, d := range s.recentDeletes {
		if now.Sub(d.at) < soakDeleteRisk {
			keep = append(keep, d)
		}
	}
	s.recentDeletes = append(keep, soakRecentDelete{conv: c, k: k, at: now})
}

// soakRecentDelete is a delete sent in the last soakDeleteRisk.
type soakRecentDelete struct {
	conv *soakConv
	k    int
	at   time.Time
}

// killed settles what the killed process of shard had not answered: those messages get
// no reply, and their members ask again once it is back (Discord does not resend). Its
// last requests are read first, so a reply it did post counts as the answer. Deletes sent
// to it just before are marked at risk. It returns how many messages were cut off.
func (s *soak) killed(shard int) int {
	time.Sleep(200 * time.Millisecond)
	mark := s.fake.Mark()
	for wait := time.Now().Add(10 * time.Second); s.seen.Load() < int64(mark) && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, p := range s.pending {
		if p.conv.place.shard != shard {
			continue
		}
		delete(s.pending, id)
		p.outcome = outcomeKilled
		close(p.done)
		n++
	}
	for _, d := range s.recentDeletes {
		if d.conv.place.shard == shard && time.Since(d.at) < soakDeleteRisk {
			d.conv.setFlag(d.k, turnDeleteAtRisk)
		}
	}
	s.killedInFlight += n
	return n
}
