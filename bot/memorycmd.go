package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Embed colours: neutral for views, amber for confirmations.
const (
	colorView    = 0x5865F2
	colorConfirm = 0xE67E22
)

func (b memoryCommands) memorySearch(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	query := c.options.str("query")
	if query == "" {
		return nil, errT(memory.EINVALID, "search.error.query")
	}
	// A member asked for these memories: the search counts as access and resets their decay.
	q := memory.SearchQuery{Text: query, Owners: []memory.Owner{owner}, Limit: b.pageSize, Audience: c.audience(ctx), CountAccess: true,
		MatchesOnly: true}
	if err := b.searchFilters(c, &q); err != nil {
		return nil, err
	}
	results, err := b.store.Recall.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	l := c.locale()
	// Over the budget or rate of this server (or member), the query had no vector and the
	// search ran on keywords alone: the answer says so rather than fail.
	var keywordOnly string
	if memory.SpendLimited(ctx) {
		keywordOnly = i18n.T(l, "search.keyword_only")
	}
	if len(results) == 0 {
		key := i18n.Key("search.none")
		if filtered(&q) {
			key = "search.none.filtered"
		}
		return &response{content: joinNote(i18n.T(l, key, describeIn(l, owner), oneLine(query, 100)), "\n", keywordOnly)}, nil
	}
	var sb strings.Builder
	for _, r := range results {
		sb.WriteString(memoryLineIn(l, r.Memory, owner, c.guildID()))
		sb.WriteString("\n")
		if q.Explain {
			sb.WriteString(explainLine(l, r, b.store.Now()))
			sb.WriteString("\n")
		}
	}
	return &response{embeds: []*discordgo.MessageEmbed{{
		Title:       i18n.T(l, "search.title", capitalize(describeIn(l, owner)), oneLine(query, 60)),
		Description: sb.String(),
		Color:       colorView,
		Footer:      &discordgo.MessageEmbedFooter{Text: joinNote(i18n.T(l, "search.footer", len(results)), " · ", keywordOnly)},
	}}}, nil
}

// explainLine says, as a small line under a search result, what placed it (i18n.Explain).
func explainLine(l i18n.Locale, r memory.SearchResult, now time.Time) string {
	return "-# ↳ " + i18n.Explain(l, r, now)
}

// joinNote appends note to text after sep, when there is a note.
func joinNote(text, sep, note string) string {
	if note == "" {
		return text
	}
	return text + sep + note
}

// ownerAndID reads the scope and the required id option.
func (c *call) ownerAndID() (memory.Owner, int64, error) {
	owner, err := c.owner()
	if err != nil {
		return owner, 0, err
	}
	id, ok := c.options.integer("id")
	if !ok || id <= 0 {
		return owner, 0, errT(memory.EINVALID, "error.id")
	}
	return owner, id, nil
}

func (b memoryCommands) memoryAdd(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	if err := b.perms.checkWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	m := memory.Memory{
		Scope:   owner.Scope,
		GuildID: c.guildID(), // for personal memory: where it was made
		UserID:  owner.UserID,
		Type:    memory.Type(c.options.str("type")),
		Content: c.options.str("content"),
		Tags:    splitTags(c.options.str("tags")),
		Source:  memory.SourceCommand,
		Provenance: memory.Provenance{AuthorID: c.userID(), Author: c.userName(), ChannelID: c.i.ChannelID,
			MessageID: c.i.ID},
	}
	m.Pinned, _ = c.options.boolean("pinned")
	if r, similar, err := b.dups.answer(ctx, c, memory.HeldWrite{Memory: m}); err != nil || similar {
		return r, err
	}
	res, err := b.store.Memories.RememberAs(ctx, c.writeContext(ctx), m, memory.UserActor(c.userID()))
	if err != nil {
		return nil, err
	}
	c.log.Info("memory added by command", "memory_id", res.Memory.ID, "scope", owner.Scope, "created", res.Created)
	if res.Created {
		c.setNotice(res.Memory, false)
	}
	if !res.Created {
		return &response{content: c.t("add.already", res.Memory.ID, oneLine(res.Memory.Content, 300))}, nil
	}
	return &response{content: c.t("notice.saved", scopeName(c.locale(), owner), res.Memory.ID, oneLine(res.Memory.Content, 300))}, nil
}

func (b memoryCommands) memoryEdit(ctx context.Context, c *call) (*response, error) {
	owner, id, err := c.ownerAndID()
	if err != nil {
		return nil, err
	}
	if err := b.perms.checkWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	if err := b.visibility.requireVisible(ctx, c, owner, id); err != nil {
		return nil, err
	}
	var ch memory.Change
	if content := c.options.str("content"); content != "" {
		ch.Content = &content
	}
	if t := c.options.str("type"); t != "" {
		typ := memory.Type(t)
		ch.Type = &typ
	}
	if c.options.has("tags") {
		tags := splitTags(c.options.str("tags"))
		ch.Tags = &tags
	}
	if pinned, ok := c.options.boolean("pinned"); ok {
		ch.Pinned = &pinned
	}
	if ch.Content == nil && ch.Type == nil && ch.Tags == nil && ch.Pinned == nil {
		return nil, errT(memory.EINVALID, "edit.error.nothing")
	}
	ch.Reason = "edited by command"
	m, err := b.store.Memories.ModifyAs(ctx, c.writeContext(ctx), owner, id, ch, memory.UserActor(c.userID()))
	if err != nil {
		return nil, err
	}
	c.setNotice(m, false)
	c.log.Info("memory edited by command", "memory_id", m.ID, "scope", owner.Scope, "version", m.Version)
	return &response{content: c.t("edit.done", scopeName(c.locale(), owner), m.ID, m.Version, oneLine(m.Content, 300))}, nil
}

func (b memoryCommands) memoryRecover(ctx context.Context, c *call) (*response, error) {
	owner, id, err := c.ownerAndID()
	if err != nil {
		return nil, err
	}
	if err := b.perms.requireWrite(ctx, c, owner); err != nil {
		return nil, err
	}
	if err := b.visibility.requireVisible(ctx, c, owner, id); err != nil {
		return nil, err
	}
	m, err := b.store.Memories.RecoverAs(ctx, c.writeContext(ctx), owner, id, 0, memory.UserActor(c.userID()))
	if err != nil {
		return nil, err
	}
	c.log.Info("memory recovered by command", "memory_id", id, "scope", owner.Scope)
	return &response{content: c.t("recover.done", scopeName(c.locale(), owner), m.ID, oneLine(m.Content, 300))}, nil
}

func (b memoryCommands) memoryHistory(ctx context.Context, c *call) (*response, error) {
	owner, id, err := c.ownerAndID()
	if err != nil {
		return nil, err
	}
	if err := b.visibility.requireVisible(ctx, c, owner, id); err != nil {
		return nil, err
	}
	events, err := b.store.Memories.History(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	// Newest last, as a story; keep the latest when there are too many.
	const maxEvents = 15
	if len(events) > maxEvents {
		events = events[len(events)-maxEvents:]
	}
	l := c.locale()
	aud := c.audience(ctx)
	var sb strings.Builder
	for _, ev := range events {
		// A row may quote words from another channel than the memory's (its text before a
		// move, a proposal, a statement it may contradict): those rows keep only what
		// happened, when and by whom.
		ev, withheld := ev.ShownTo(aud)
		sb.WriteString(i18n.T(l, "history.event", ev.Version, ev.Action, describeActorIn(l, ev.Actor), ev.CreatedAt.Unix()))
		if withheld {
			sb.WriteString(" " + i18n.T(l, "history.withheld") + "\n")
			continue
		}
		if ev.Reason != "" {
			fmt.Fprintf(&sb, " (%s)", oneLine(ev.Reason, 80))
		}
		sb.WriteString("\n")
		switch {
		case ev.Action == memory.ActionReview:
			// The memory did not change: the row names the statement it may contradict.
			if ev.NewContent != "" {
				sb.WriteString("> " + i18n.T(l, "history.may_contradict", oneLine(ev.NewContent, 150)) + "\n")
			}
		case !historyApplied(ev.Action):
			// A proposal the pipeline recorded but did not apply; striking the old content
			// through would read as a change that never happened.
			if ev.NewContent != "" {
				sb.WriteString("> " + i18n.T(l, "history.not_applied", oneLine(ev.NewContent, 150)) + "\n")
			}
		case ev.OldContent != "" && ev.NewContent != "" && ev.OldContent != ev.NewContent:
			fmt.Fprintf(&sb, "> ~~%s~~\n> %s\n", oneLine(ev.OldContent, 150), oneLine(ev.NewContent, 150))
			writeStateChange(&sb, l, ev)
		case isStateChange(ev):
			// Only the lifecycle moved; the memory it names is not said here, as it may be
			// one this reader cannot see (/memory show names it to those who may).
			writeStateChange(&sb, l, ev)
		case ev.NewContent != "":
			fmt.Fprintf(&sb, "> %s\n", oneLine(ev.NewContent, 150))
		case ev.OldContent != "":
			fmt.Fprintf(&sb, "> ~~%s~~\n", oneLine(ev.OldContent, 150))
		}
	}
	return &response{embeds: []*discordgo.MessageEmbed{{
		Title:       i18n.T(l, "history.title", id, scopeName(l, owner)),
		Description: truncate(sb.String(), 4000),
		Color:       colorView,
	}}}, nil
}

// memoryLine renders a memory as one list line, in English.
func memoryLine(m *memory.Memory, owner memory.Owner, here string) string {
	return memoryLineIn(i18n.English, m, owner, here)
}

// memoryLineIn renders a memory as one list line in l.
func memoryLineIn(l i18n.Locale, m *memory.Memory, owner memory.Owner, here string) string {
	line := fmt.Sprintf("**#%d** · %s", m.ID, i18n.T(l, i18n.Key("choice.type."+string(m.Type))))
	if m.Pinned {
		line += " · 📌"
	}
	if owner.Scope == memory.ScopePersonal {
		switch {
		case m.GuildID == "":
			line += " · " + i18n.T(l, "line.from_dms")
		case here == "":
			// Listed in a DM, where no server is "this" one.
			line += " · " + i18n.T(l, "line.from_a_server")
		case m.GuildID == here:
			line += " · " + i18n.T(l, "line.from_this_server")
		default:
			line += " · " + i18n.T(l, "line.from_another_server")
		}
	}
	if m.GuildID != "" && m.Provenance.ChannelID != "" {
		// Where it was learned decides where it may be used (SPEC §2).
		line += " · <#" + m.Provenance.ChannelID + ">"
	}
	return line + "\n" + oneLine(m.Content, 200)
}

// importanceText shows m's importance as recall weighs it at now and, when decay has lowered
// it, the base it returns to once someone recalls the memory again.
func importanceText(m *memory.Memory, now time.Time) string {
	return importanceTextIn(i18n.English, m, now)
}

func importanceTextIn(l i18n.Locale, m *memory.Memory, now time.Time) string {
	eff := strconv.FormatFloat(m.EffectiveImportance(now), 'f', 2, 64)
	base := strconv.FormatFloat(m.Importance, 'f', 2, 64)
	if eff == base {
		return eff
	}
	return i18n.T(l, "show.decayed", eff, base)
}

// describe names a scope for people.
func describe(o memory.Owner) string {
	if o.Scope == memory.ScopePersonal {
		return "your personal memory"
	}
	return "this server's memory"
}

// scopeArg is the scope option to repeat in a suggested command.
func scopeArg(o memory.Owner) string {
	if o.Scope == memory.ScopePersonal {
		return " scope:personal"
	}
	return ""
}

// describeActor renders a history actor: people as mentions (which render
// as names and ping nobody, since replies allow no mentions), the rest as is.
// historyApplied reports whether a history action changed the memory. The others
// (deduped, skipped, blocked, shadow, review_needed) record what the background pipeline
// considered and why it left the memory alone.
func historyApplied(a memory.Action) bool {
	switch a {
	case memory.ActionCreate, memory.ActionUpdate, memory.ActionDelete, memory.ActionRecover,
		memory.ActionImport, memory.ActionPurge:
		return true
	}
	return false
}

func describeActor(actor memory.Actor) string { return describeActorIn(i18n.English, actor) }

// roundDuration renders a duration as people say it: "30 days", "10 minutes".
func roundDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d.Hours()/24+0.5))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()+0.5))
	case d >= 2*time.Minute:
		return fmt.Sprintf("%d minutes", int(d.Minutes()+0.5))
	case d > time.Second:
		return fmt.Sprintf("%d seconds", int(d.Seconds()+0.5))
	}
	return "a moment"
}

func splitTags(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// truncate cuts s to at most n runes.
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func isStateChange(ev memory.HistoryEvent) bool {
	_, _, _, ok := ev.StateChange()
	return ok
}

// writeStateChange writes the lifecycle an update row moved its memory through, if any.
func writeStateChange(sb *strings.Builder, l i18n.Locale, ev memory.HistoryEvent) {
	from, to, _, ok := ev.StateChange()
	if !ok {
		return
	}
	word := func(s memory.State) string { return i18n.T(l, i18n.Key("choice.lifecycle."+string(s.Lifecycle()))) }
	sb.WriteString("> " + i18n.T(l, "history.state", word(from), word(to)) + "\n")
}
