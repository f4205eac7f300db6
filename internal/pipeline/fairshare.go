package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/kioku-bot/kioku/memory"
	"golang.org/x/time/rate"
)

// No single server or member may drain the pipeline's model budget, which every server
// shares: a server (or one member's DMs) uses at most GuildShare of the hourly calls while
// other servers' jobs are waiting, and one member's high-signal turns start at most
// HighSignalPerHour extractions at once; past that their turns wait for the batch or idle
// trigger like any other.

// Defaults of the fair-share rules.
const (
	// DefaultGuildShare is the part of CallsPerHour one server may use while others wait:
	// half, so a busy server can never starve the rest, and a bot in one server still has
	// the whole budget (the share only applies when someone else is waiting).
	DefaultGuildShare = 0.5
	// DefaultHighSignalPerHour is how many high-signal turns of one member per hour
	// start an extraction at once: generous for anyone deciding things in earnest, a
	// bounded cost for someone who types "remember" in a loop.
	DefaultHighSignalPerHour = 20
)

// shareKey names whose budget share a job spends: its guild, or in a DM the member's DM
// channel.
func shareKey(guildID, channelID string) string {
	if guildID != "" {
		return "g:" + guildID
	}
	return "dm:" + channelID
}

// othersWaiting reports whether a due extraction job of another share key is queued. A
// read error counts as no: the share rule must never stop the pipeline on its own.
func (p *worker) othersWaiting(ctx context.Context, key string, log *slog.Logger) bool {
	jobs, err := p.ledger.ListJobs(ctx, memory.JobQueued, 500)
	if err != nil {
		log.Warn("couldn't check the queue for the budget share", slog.Any("err", err))
		return false
	}
	now := p.now()
	for _, j := range jobs {
		if j.Kind != KindExtract || j.RunAfter.After(now) {
			continue
		}
		guild, channel, _ := strings.Cut(j.DedupKey, "/")
		if shareKey(guild, channel) != key {
			return true
		}
	}
	return false
}

// memberTriggers limits the high-signal extraction triggers of each member.
type memberTriggers struct {
	perHour int
	now     func() time.Time

	mu        sync.Mutex
	limiters  map[string]*rate.Limiter
	lastUse   map[string]time.Time
	nextPrune time.Time
}

func newMemberTriggers(perHour int, now func() time.Time) *memberTriggers {
	return &memberTriggers{perHour: perHour, now: now, limiters: map[string]*rate.Limiter{}, lastUse: map[string]time.Time{}}
}

// allow spends one of userID's high-signal triggers; false when they used their hour's.
func (m *memberTriggers) allow(userID string) bool {
	if m.perHour <= 0 {
		return true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if !now.Before(m.nextPrune) {
		// A limiter untouched for an hour is full again, the same as a new one: drop it.
		for id, at := range m.lastUse {
			if now.Sub(at) >= time.Hour {
				delete(m.lastUse, id)
				delete(m.limiters, id)
			}
		}
		m.nextPrune = now.Add(time.Minute)
	}
	l := m.limiters[userID]
	if l == nil {
		l = rate.NewLimiter(rate.Every(time.Hour/time.Duration(m.perHour)), m.perHour)
		m.limiters[userID] = l
	}
	m.lastUse[userID] = now
	return l.AllowN(now, 1)
}
