package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kioku-bot/kioku/intent"
	"github.com/kioku-bot/kioku/memory"
)

// jobPayload is the payload of an extraction job.
type jobPayload struct {
	GuildID   string `json:"guild_id"`
	ChannelID string `json:"channel_id"`
	// Checkpoint keeps a run's model results when the run is postponed (budget spent,
	// shutdown) or crashes after extracting, so the next run does not pay for them again.
	Checkpoint *checkpoint `json:"checkpoint,omitempty"`
	// RulesWaits counts the times the job was put back because its server's roles were not
	// known; the wait grows with it (rulesWait).
	RulesWaits int `json:"rules_waits,omitempty"`
}

// checkpoint is the model work done for one batch of turns.
type checkpoint struct {
	From    int64 `json:"from"`    // cursor the batch starts after
	Through int64 `json:"through"` // last turn of the batch
	// Records are the transcript turn ids of the records the model was shown: Records[n-1]
	// is record n, which facts cite as evidence. A reused checkpoint resolves evidence
	// through them, so a turn deleted meanwhile is simply gone, never another turn.
	Records []int64 `json:"records"`
	// StartedAt is when the run that made the extraction leased the job; forget-me fences
	// proposals from that time on, however late they are committed.
	StartedAt  time.Time        `json:"started_at,omitzero"`
	Extraction Extraction       `json:"extraction"`
	Decisions  map[int]Decision `json:"decisions,omitempty"` // by fact index
}

func dedupKey(ch memory.Channel) string { return ch.GuildID + "/" + ch.ChannelID }

// ExtractionKey is the dedup key of a conversation's extraction job (memory.Job.DedupKey),
// for a transport that waits for what its conversation is learning.
func ExtractionKey(guildID, channelID string) string {
	return dedupKey(memory.Channel{GuildID: guildID, ChannelID: channelID})
}

// modeFor is the effective mode in a guild: the operator's flags narrowed by the guild's
// /kioku config mode. DMs (guildID "") follow the operator's flags alone.
func (p *core) modeFor(ctx context.Context, guildID string) (memory.PipelineMode, error) {
	flags := p.flags
	if guildID != "" {
		gs, err := p.settings.GuildSettings(ctx, guildID)
		if err != nil {
			return "", err
		}
		flags = flags.And(ModeFlags(gs.PipelineMode))
	}
	return flags.Mode(), nil
}

// OnTurn tells the pipeline that the chat turn stored t (call it right after AppendTurn,
// outside any transaction). It schedules the channel's extraction per the trigger rules:
//
//   - a high-signal turn (explicit memory intent, decision or preference language; pass
//     intent.HighSignal(text), which the turn has computed already) → extract now;
//   - at least BatchTurns (N, default 8) unextracted user turns → extract now;
//   - otherwise → extract once the channel has been idle IdleAfter (T, default 10 min);
//     each new turn restarts that timer.
//
// Assistant turns, turns said where kioku does not learn, users with privacy "full" and
// guilds with the pipeline off schedule nothing. One job per channel: repeated calls only move its time.
func (p *turnHook) OnTurn(ctx context.Context, t memory.Turn, highSignal bool) error {
	if t.Role != memory.RoleUser || t.NoLearning {
		// A turn said where kioku does not learn is never extracted: nothing to schedule.
		return nil
	}
	mode, err := p.modeFor(ctx, t.GuildID)
	if err != nil {
		return fmt.Errorf("couldn't schedule extraction: %w", err)
	}
	if mode == memory.PipelineOff {
		return nil
	}
	us, err := p.settings.UserSettings(ctx, t.UserID)
	if err != nil {
		return fmt.Errorf("couldn't schedule extraction: %w", err)
	}
	if us.Privacy == memory.PrivacyFull {
		return nil
	}
	if highSignal && !p.triggers.allow(t.UserID) {
		// Over their hour's high-signal triggers: the turn still counts towards the
		// batch and idle triggers, it just cannot start (and pay for) a run by itself.
		highSignal = false
		p.log.Info("high-signal trigger over the member's hourly limit; extraction waits for the batch or idle trigger",
			slog.String(memory.LogUserID, t.UserID), slog.String(memory.LogGuildID, t.GuildID), slog.String(memory.LogChannelID, t.ChannelID))
	}
	if _, err := p.schedule(ctx, memory.Channel{GuildID: t.GuildID, ChannelID: t.ChannelID}, highSignal); err != nil {
		return fmt.Errorf("couldn't schedule extraction: %w", err)
	}
	return nil
}

// schedule enqueues or re-times the extraction job of ch from its backlog. It reports
// whether a job was created.
func (p *core) schedule(ctx context.Context, ch memory.Channel, highSignal bool) (bool, error) {
	b, err := p.transcript.ExtractionBacklog(ctx, ch.GuildID, ch.ChannelID)
	if err != nil {
		return false, err
	}
	if b.Turns == 0 || b.UserTurns == 0 {
		// Only the bot spoke since the cursor (its reply to turns a job already took):
		// nothing to extract on its own. Its turns wait as context for the next member's.
		return false, nil
	}
	opt := memory.EnqueueOptions{MaxAttempts: p.cfg.MaxAttempts}
	if !highSignal && b.UserTurns < p.cfg.BatchTurns {
		opt.RunAfter, opt.Debounce = b.LastAt.Add(p.cfg.IdleAfter), true
	}
	_, created, err := p.jobs.Enqueue(ctx, KindExtract, dedupKey(ch),
		jobPayload{GuildID: ch.GuildID, ChannelID: ch.ChannelID}, opt)
	if err == nil {
		p.notify()
	}
	return created, err
}

// rearm schedules ch again from what is waiting in its transcript, reading the turns to
// see whether any is high-signal. The worker calls it after each job (turns may have
// arrived while the job ran, when OnTurn could not touch the running job) and the sweep
// for channels whose scheduling was lost.
func (p *core) rearm(ctx context.Context, ch memory.Channel) (bool, error) {
	cursor, err := p.transcript.ExtractionCursor(ctx, ch.GuildID, ch.ChannelID)
	if err != nil {
		return false, err
	}
	turns, err := p.transcript.TurnsAfter(ctx, ch.GuildID, ch.ChannelID, cursor, p.cfg.MaxTurnsPerJob)
	if err != nil {
		return false, err
	}
	high := false
	for _, t := range turns {
		if t.Role == memory.RoleUser && intent.HighSignal(t.Content) {
			high = true
			break
		}
	}
	return p.schedule(ctx, ch, high)
}

// Sweep schedules extraction for channels with unextracted turns from the last
// SweepWindow that have no job, which only happens when the process died between storing
// a turn and scheduling it. A channel whose job is dead stays alone until new turns
// arrive after it died (or an operator requeues it): the sweep never resurrects a job
// that kept failing. It returns the number of jobs created.
func (p *turnHook) Sweep(ctx context.Context) (int, error) {
	chans, err := p.transcript.ChannelsWithBacklog(ctx, p.now().Add(-p.cfg.SweepWindow), 500)
	if err != nil {
		return 0, err
	}
	if len(chans) == 0 {
		return 0, nil
	}
	deadJobs, err := p.ledger.ListJobs(ctx, memory.JobDead, 500)
	if err != nil {
		return 0, err
	}
	diedAt := make(map[string]time.Time)
	for _, j := range deadJobs {
		if j.Kind == KindExtract && j.UpdatedAt.After(diedAt[j.DedupKey]) {
			diedAt[j.DedupKey] = j.UpdatedAt
		}
	}
	created := 0
	for _, ch := range chans {
		if died, ok := diedAt[dedupKey(ch)]; ok {
			b, err := p.transcript.ExtractionBacklog(ctx, ch.GuildID, ch.ChannelID)
			if err != nil {
				return created, err
			}
			if !b.LastAt.After(died) {
				continue
			}
		}
		ok, err := p.rearm(ctx, ch)
		if err != nil {
			return created, err
		}
		if ok {
			created++
		}
	}
	return created, nil
}
