package bot

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Defaults of the cap on chat turns (Config.MaxConcurrentTurns, Config.TurnQueue).
const (
	// DefaultMaxConcurrentTurns is how many chat turns run at once. A turn spends nearly
	// all its time waiting for the model, so this bounds the model requests in flight and
	// the memory of their prompts, not CPU; sixteen keeps a hosted model busy without
	// tripping its rate limits, and a local one queues the rest itself.
	DefaultMaxConcurrentTurns = 16
	// DefaultTurnQueue is how many messages may wait for a turn while all run: four rounds
	// of the running turns, a burst a busy server produces, answered within a minute or
	// two.
	DefaultTurnQueue = 64
)

// Why a message got no turn.
var (
	errBusy    = errors.New("too many chat turns waiting")
	errClosing = errors.New("shutting down")
)

// admission caps the chat turns running at once, with a bounded queue of messages waiting
// for one. Discord delivers every message to its own goroutine, so without it a flood
// would start as many model requests as it has messages. Only chat turns take a place:
// slash commands and buttons answer from the store and make no chat model call.
type admission struct {
	// slots holds one value per running turn.
	slots chan struct{}
	queue int
	// closed is closed when shutdown begins: waiting messages give up their place.
	closed    chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	waiting int
}

// newAdmission allows running turns at once and queue waiting ones (negative: none).
func newAdmission(running, queue int) *admission {
	return &admission{slots: make(chan struct{}, running), queue: max(queue, 0), closed: make(chan struct{})}
}

// enter takes a place for one turn, waiting in the queue while every place is taken. It
// returns the function that gives the place back, or errBusy when the queue is full,
// errClosing when shutdown began first, or ctx's error.
func (a *admission) enter(ctx context.Context, log *slog.Logger) (func(), error) {
	select {
	case <-a.closed:
		return nil, errClosing
	default:
	}
	select {
	case a.slots <- struct{}{}:
		return a.leave, nil
	default:
	}
	a.mu.Lock()
	if a.waiting >= a.queue {
		a.mu.Unlock()
		return nil, errBusy
	}
	a.waiting++
	n := a.waiting
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.waiting--
		a.mu.Unlock()
	}()
	log.Debug("turn queued", "waiting", n)
	select {
	case a.slots <- struct{}{}:
		return a.leave, nil
	case <-a.closed:
		return nil, errClosing
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// leave gives back the place of a finished turn.
func (a *admission) leave() { <-a.slots }

// close makes waiting messages give up their places, and new ones not wait: on shutdown
// the running turns finish, and the waiting ones are told to send again.
func (a *admission) close() { a.closeOnce.Do(func() { close(a.closed) }) }

// counts reports the turns running and the messages waiting now.
func (a *admission) counts() (running, waiting int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.slots), a.waiting
}

// admitTurn takes a place for the turn of message m. When it gets none (the queue is full,
// the bot is shutting down, or the wait outlasted a turn's timeout) it answers m saying so,
// and the message gets no turn: nothing of it is stored, and its author may send it again.
// Someone at privacy level full is not answered even then.
func (b messageEvents) admitTurn(m *discordgo.Message, log *slog.Logger) (release func(), ok bool) {
	ctx, cancel := context.WithTimeout(b.base, b.turnTimeout)
	defer cancel()
	release, err := b.admission.enter(ctx, log)
	if err == nil {
		return release, true
	}
	if b.base.Err() != nil {
		return nil, false // cancelled by Shutdown: the session is closing
	}
	// The reply is read in the channel: the server's language.
	lctx, lcancel := context.WithTimeout(b.base, 5*time.Second)
	defer lcancel()
	l := b.messageLocale(lctx, m, &messageSettings{store: b.store, log: log, guildID: m.GuildID})
	text := i18n.T(l, "turn.busy")
	if errors.Is(err, errClosing) {
		text = i18n.T(l, "turn.restarting")
	} else {
		b.stats.busy.Add(1)
	}
	rctx, rcancel := context.WithTimeout(b.base, 10*time.Second)
	defer rcancel()
	if us, err := b.store.Settings.UserSettings(rctx, m.Author.ID); err == nil && us.Privacy == memory.PrivacyFull {
		b.stats.ignored.Add(1)
		return nil, false
	}
	running, waiting := b.admission.counts()
	log.Warn("message refused: no turn available", "reason", err.Error(), "running", running, "waiting", waiting)
	if err := b.sendReply(rctx, m, text); err != nil {
		log.Error("couldn't send reply", "err", err)
	}
	return nil, false
}
