package main

// Sharding (README "Scaling out"). Discord sends each server's events to one gateway
// connection, the shard (guild_id >> 22) % shard_count; DMs go to shard 0. A process runs
// either the one shard KIOKU_SHARD_ID/KIOKU_SHARD_COUNT name, or with KIOKU_SHARDS=auto
// every shard Discord recommends, one session and one bot each. Short-term memory, rate
// limiters and the chat engine are shared by the bots of a process; a server's state never
// needs to cross processes because its events only ever reach its shard.

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/bwmarrin/discordgo"
	"github.com/kioku-bot/kioku/bot"
	"github.com/kioku-bot/kioku/memory"
)

// maxAutoShards bounds what KIOKU_SHARDS=auto accepts from the gateway: Discord recommends
// one shard per 1,000 servers, so more than this in one process means a misreading, not a
// bot this process could serve.
const maxAutoShards = 128

// shardSessions returns the Discord sessions this process runs: one per shard.
func (app *App) shardSessions(ctx context.Context) ([]*discordgo.Session, error) {
	cfg := app.config
	first, err := bot.NewSession(cfg.DiscordToken, cfg.DiscordAPIURL)
	if err != nil {
		return nil, err
	}
	id, count := cfg.ShardID, cfg.ShardCount
	if !cfg.ShardsAuto {
		first.ShardID, first.ShardCount = id, count
		return []*discordgo.Session{first}, nil
	}
	gw, err := first.GatewayBot(discordgo.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("couldn't ask discord how many shards to run (KIOKU_SHARDS=auto): %w", err)
	}
	count = gw.Shards
	if count < 1 || count > maxAutoShards {
		return nil, fmt.Errorf("couldn't use discord's recommendation of %d shards (KIOKU_SHARDS=auto runs 1 to %d); set KIOKU_SHARD_ID and KIOKU_SHARD_COUNT per process instead", count, maxAutoShards)
	}
	app.logger.Info("running every recommended shard", "shards", count)
	sessions := []*discordgo.Session{first}
	for range count - 1 {
		s, err := bot.NewSession(cfg.DiscordToken, cfg.DiscordAPIURL)
		if err != nil {
			return nil, err
		}
		sessions = append(sessions, s)
	}
	for i, s := range sessions {
		s.ShardID, s.ShardCount = i, count
	}
	return sessions, nil
}

// shardedBot is the bots of one process, one per shard it runs, seen as one: for the
// lifecycle, the health endpoint, metrics and the pipeline's channel rule.
type shardedBot struct {
	bots []*bot.Bot
	// first and count: bots[i] runs shard first+i of count.
	first, count int
}

// forGuild returns the bot whose shard receives guildID's events (DMs: shard 0, or the only
// bot). A guild of a shard another process runs gets this process's first bot, whose state
// does not know the guild: its channel rule then comes from the roles and channels the
// owning process stored, and until those exist it says the rules are unknown.
func (s *shardedBot) forGuild(guildID string) *bot.Bot {
	if len(s.bots) == 1 || guildID == "" {
		return s.bots[0]
	}
	n, err := strconv.ParseUint(guildID, 10, 64)
	if err != nil {
		return s.bots[0]
	}
	i := int((n>>22)%uint64(s.count)) - s.first
	if i < 0 || i >= len(s.bots) {
		return s.bots[0]
	}
	return s.bots[i]
}

// ReplyAudience is the channel rule of a conversation, from the bot whose shard holds the
// guild's channels and roles.
func (s *shardedBot) ReplyAudience(ctx context.Context, guildID, channelID string) *memory.Audience {
	return s.forGuild(guildID).ReplyAudience(ctx, guildID, channelID)
}

// Open connects every shard; when one fails, those already connected are closed again, and
// the error names the shard when there are several.
func (s *shardedBot) Open() error {
	for i, b := range s.bots {
		if err := b.Open(); err != nil {
			for _, open := range s.bots[:i] {
				_ = open.Shutdown(context.Background())
			}
			if s.count == 1 {
				return err // one shard: naming it says nothing
			}
			return &gatewayError{shard: fmt.Sprintf("shard %d of %d", s.first+i, s.count), err: err}
		}
	}
	return nil
}

// Shutdown stops every shard's bot within ctx.
func (s *shardedBot) Shutdown(ctx context.Context) error {
	var errs []error
	for _, b := range s.bots {
		if err := b.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Connected reports whether every shard's gateway session is up: a process with a shard
// down is not healthy, since that shard's servers get no answers.
func (s *shardedBot) Connected() bool {
	for _, b := range s.bots {
		if !b.Connected() {
			return false
		}
	}
	return true
}

// Stats adds up the shards' counters; Connected as in Connected, and CommandsRegistered is
// the last registration's size (every shard registers the same set).
func (s *shardedBot) Stats() bot.Stats {
	var out bot.Stats
	out.Connected = true
	for _, b := range s.bots {
		st := b.Stats()
		out.Turns += st.Turns
		out.TurnErrors += st.TurnErrors
		out.Ignored += st.Ignored
		out.TurnsInFlight += st.TurnsInFlight
		out.TurnsQueued += st.TurnsQueued
		out.TurnsBusy += st.TurnsBusy
		out.Interactions += st.Interactions
		out.InteractionErrors += st.InteractionErrors
		out.Denied += st.Denied
		out.CommandsRegistered = max(out.CommandsRegistered, st.CommandsRegistered)
		out.Connected = out.Connected && st.Connected
	}
	return out
}

// shardList describes the shards a process runs for its start-up log line, such as "1/2" or
// "0-3/4".
func shardList(s *shardedBot) string {
	last := s.first + len(s.bots) - 1
	if last == s.first {
		return fmt.Sprintf("%d/%d", s.first, s.count)
	}
	return fmt.Sprintf("%d-%d/%d", s.first, last, s.count)
}
