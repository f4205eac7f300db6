package bot

// Browsing: /memory list as pages of an embed with Previous/Next buttons and type, tag and
// author filters, and /memory show as one embed with the memory's provenance, version,
// linked entities and recent history.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// maxTagFilter bounds the tag filter, so a page button's custom ID stays within Discord's
// 100 characters whatever the other filters are.
const maxTagFilter = 30

// showHistory is how many of the newest changes /memory show lists.
const showHistory = 5

// listFilters are what a listing is narrowed to.
type listFilters struct {
	typ    memory.Type
	tag    string
	author string // a user id
	// timing keeps time-bound memories still to come or already past ("" for all).
	timing memory.Timing
	// lifecycle keeps the memories in one lifecycle ("" for all but the shelved ones).
	lifecycle memory.Lifecycle
}

// listPattern is the only shape of a page button's custom ID: direction (which only keeps
// the two buttons' IDs apart), scope, page, then the filters; the tag is the rest. The
// timing and lifecycle fields came later: a button sent before them has neither, and a tag
// never holds ":", so the shapes cannot be mistaken for each other. The lifecycle field is
// written only when set, after a "~".
var listPattern = regexp.MustCompile(`^kioku:list:([pn]):([sp]):(0|[1-9][0-9]{0,5}):([a-z]{0,20}):([0-9]{0,20}):(?:(upcoming|past|):)?(?:~(active|past|superseded|disputed|archived):)?(.*)$`)

// listID is the custom ID of a page button.
func listID(dir string, scope memory.Scope, page int, f listFilters) string {
	lifecycle := ""
	if f.lifecycle != "" {
		lifecycle = "~" + string(f.lifecycle) + ":"
	}
	return fmt.Sprintf("%s:%s:%s:%d:%s:%s:%s:%s%s", idList, dir, scopeLetter(scope), page, f.typ, f.author, f.timing, lifecycle, f.tag)
}

// browseList is /memory list.
func (b memoryBrowser) browseList(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	f := listFilters{typ: memory.Type(c.options.str("type")), tag: strings.ToLower(c.options.str("tag")), author: c.options.str("author"),
		timing: memory.Timing(c.options.str("when")), lifecycle: memory.Lifecycle(c.options.str("lifecycle"))}
	loc := c.uxLocale()
	if (f.typ != "" && !f.typ.Valid()) || (f.timing != "" && !f.timing.Valid()) || (f.lifecycle != "" && !f.lifecycle.Valid()) {
		return nil, uxError(loc, memory.EINVALID, "ux.list.badfilter")
	}
	if utf8.RuneCountInString(f.tag) > maxTagFilter || strings.Contains(f.tag, ":") {
		return nil, uxError(loc, memory.EINVALID, "ux.list.badtag", maxTagFilter)
	}
	if f.author != "" && strings.Trim(f.author, "0123456789") != "" {
		return nil, uxError(loc, memory.EINVALID, "ux.list.badfilter")
	}
	return b.browsePage(ctx, c, owner, 0, f)
}

// browsePress turns a page. Everything is decided again for the member pressing: the scope
// is theirs (their own personal memory, or the server's of the guild they press in) and
// the channel rules are theirs, whoever opened the list.
func (b memoryBrowser) browsePress(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	p := listPattern.FindStringSubmatch(c.customID)
	if p == nil {
		return nil, errUXBroken(loc)
	}
	scope := memory.ScopeServer
	if p[2] == "p" {
		scope = memory.ScopePersonal
	}
	owner, ok := c.refOwner(memoryRef{scope: scope})
	if !ok {
		return nil, errServerInDM
	}
	page, _ := strconv.Atoi(p[3])
	f := listFilters{typ: memory.Type(p[4]), author: p[5], timing: memory.Timing(p[6]), lifecycle: memory.Lifecycle(p[7]), tag: p[8]}
	if (f.typ != "" && !f.typ.Valid()) || utf8.RuneCountInString(f.tag) > maxTagFilter {
		return nil, errUXBroken(loc)
	}
	return b.browsePage(ctx, c, owner, page, f)
}

// browsePage renders page (from 0) of owner's memories that match f and that the caller's
// audience allows.
func (b memoryBrowser) browsePage(ctx context.Context, c *call, owner memory.Owner, page int, f listFilters) (*response, error) {
	loc := c.uxLocale()
	opt := memory.ListOptions{Limit: b.pageSize, Offset: page * b.pageSize, Type: f.typ, Tag: f.tag, AuthorID: f.author,
		Timing: f.timing, Lifecycle: f.lifecycle, Audience: c.audience(ctx)}
	mems, total, err := b.store.Memories.List(ctx, owner, opt)
	if err != nil {
		return nil, err
	}
	if total == 0 {
		key := i18n.Key("ux.list.empty")
		if f != (listFilters{}) {
			key = "ux.list.empty.filtered"
		}
		return &response{content: i18n.T(loc, key, scopePlace(loc, owner.Scope))}, nil
	}
	pages := (total + b.pageSize - 1) / b.pageSize
	if page >= pages {
		// The list shrank since the page was opened; show its last page.
		page = pages - 1
		opt.Offset = page * b.pageSize
		if mems, total, err = b.store.Memories.List(ctx, owner, opt); err != nil {
			return nil, err
		}
	}
	var sb strings.Builder
	for _, m := range mems {
		line := browseLine(loc, m, owner, c.guildID())
		if utf8.RuneCountInString(sb.String())+utf8.RuneCountInString(line) > limEmbedDesc-2 {
			break
		}
		sb.WriteString(line)
		sb.WriteString("\n\n")
	}
	title := scopePlace(loc, owner.Scope)
	if r, size := utf8.DecodeRuneInString(title); size > 0 {
		title = string(unicode.ToUpper(r)) + title[size:]
	}
	var filters []string
	if f.typ != "" {
		filters = append(filters, i18n.T(loc, "ux.list.filter.type", string(f.typ)))
	}
	if f.tag != "" {
		filters = append(filters, i18n.T(loc, "ux.list.filter.tag", f.tag))
	}
	if f.timing != "" {
		filters = append(filters, i18n.T(loc, i18n.Key("choice.when."+string(f.timing))))
	}
	if f.lifecycle != "" {
		filters = append(filters, i18n.T(loc, i18n.Key("choice.lifecycle."+string(f.lifecycle))))
	}
	if f.author != "" {
		filters = append(filters, i18n.T(loc, "ux.list.filter.author", f.author))
	}
	embed := &discordgo.MessageEmbed{
		Title:       truncate(title, limEmbedTitle),
		Description: strings.TrimSpace(sb.String()),
		Color:       colorView,
		Footer:      &discordgo.MessageEmbedFooter{Text: i18n.T(loc, "ux.list.footer", page+1, pages, total)},
	}
	if len(filters) > 0 {
		embed.Fields = []*discordgo.MessageEmbedField{{Name: i18n.T(loc, "ux.list.filters"), Value: strings.Join(filters, " · ")}}
	}
	fitMemoryEmbed(embed)
	r := &response{embeds: []*discordgo.MessageEmbed{embed}}
	if pages > 1 {
		r.components = []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: i18n.T(loc, "ux.list.prev"), Style: discordgo.SecondaryButton, Disabled: page == 0,
				CustomID: listID("p", owner.Scope, max(page-1, 0), f)},
			discordgo.Button{Label: i18n.T(loc, "ux.list.next"), Style: discordgo.SecondaryButton, Disabled: page+1 >= pages,
				CustomID: listID("n", owner.Scope, min(page+1, pages-1), f)},
		}}}
	}
	return r, nil
}

// browseLine is one memory of a page: number, type, pin, origin, a link to the message it
// came from, and the start of its content.
func browseLine(loc i18n.Locale, m *memory.Memory, owner memory.Owner, here string) string {
	line := fmt.Sprintf("**#%d** · %s", m.ID, m.Type)
	if m.Pinned {
		line += " · 📌"
	}
	if len(m.Tags) > 0 {
		line += " · " + oneLine(strings.Join(m.Tags, ", "), 60)
	}
	if owner.Scope == memory.ScopePersonal {
		// Where a personal memory came from decides where it may be used.
		switch {
		case m.GuildID == "":
			line += " · " + i18n.T(loc, "ux.origin.dm")
		case here == "":
			line += " · " + i18n.T(loc, "ux.origin.server")
		case m.GuildID == here:
			line += " · " + i18n.T(loc, "ux.origin.here")
		default:
			line += " · " + i18n.T(loc, "ux.origin.other")
		}
	}
	if m.GuildID != "" && m.Provenance.ChannelID != "" {
		line += " · <#" + m.Provenance.ChannelID + ">"
	}
	if !m.RefersTo.IsZero() {
		// Discord renders both in the reader's own language and time zone: the day the
		// memory is about, and how far it is from now ("in 3 days", "2 weeks ago").
		at := strconv.FormatInt(m.RefersTo.Unix(), 10)
		line += " · 📅 <t:" + at + ":D> (<t:" + at + ":R>)"
	}
	if link := sourceLink(m); link != "" {
		line += " · [" + i18n.T(loc, "ux.jump") + "](" + link + ")"
	}
	return line + "\n" + oneLine(m.Content, 200)
}

// sourceLink is the address of the message a memory was learned from, or "" when its
// provenance names none. Memories added with /memory add record the interaction, which is
// not a message, so command memories link only when they were saved from a message
// ("Remember this", which names the message's author as the subject).
func sourceLink(m *memory.Memory) string {
	p := m.Provenance
	if p.MessageID == "" || p.ChannelID == "" || !isSnowflake(p.MessageID) || !isSnowflake(p.ChannelID) {
		return ""
	}
	if m.Source == memory.SourceCommand && m.SubjectID == "" {
		return ""
	}
	guild := m.GuildID
	if guild == "" {
		guild = "@me"
	} else if !isSnowflake(guild) {
		return ""
	}
	return "https://discord.com/channels/" + guild + "/" + p.ChannelID + "/" + p.MessageID
}

func isSnowflake(s string) bool {
	return s != "" && len(s) <= 20 && strings.Trim(s, "0123456789") == ""
}

// browseShow is /memory show: the memory, where it came from (who, where, when, which
// message), its version, the entities it mentions and those other memories mention with
// them, and its latest changes, in one embed, with its Undo and Edit buttons.
func (b memoryBrowser) browseShow(ctx context.Context, c *call) (*response, error) {
	owner, id, err := c.ownerAndID()
	if err != nil {
		return nil, err
	}
	m, err := b.store.Memories.Get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	aud := c.audience(ctx)
	if !aud.Allows(m) {
		return nil, errNotVisible(owner, id)
	}
	loc := c.uxLocale()
	embed := &discordgo.MessageEmbed{
		Title:       i18n.T(loc, "ux.show.title", m.ID, uxScopeName(loc, m.Scope)),
		Description: truncate(m.Content, limEmbedDesc),
		Color:       colorView,
		Fields: []*discordgo.MessageEmbedField{
			{Name: i18n.T(loc, "ux.show.type"), Value: string(m.Type), Inline: true},
			{Name: i18n.T(loc, "ux.show.version"), Value: strconv.Itoa(m.Version), Inline: true},
			{Name: i18n.T(loc, "ux.show.importance"), Value: importanceText(m, b.store.Now()), Inline: true},
		},
	}
	if m.Pinned {
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: i18n.T(loc, "ux.show.pinned"), Value: "📌", Inline: true})
	}
	if len(m.Tags) > 0 {
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: i18n.T(loc, "ux.show.tags"),
			Value: strings.Join(m.Tags, ", "), Inline: true})
	}
	// Where it came from: who, where, when and from which message.
	field := func(key i18n.Key, value string) {
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: i18n.T(loc, key), Value: truncate(value, maxEmbedField), Inline: true})
	}
	switch {
	case m.Provenance.AuthorID != "":
		field("ux.show.from", "<@"+m.Provenance.AuthorID+">")
	case m.Provenance.Author != "":
		field("ux.show.from", oneLine(m.Provenance.Author, 80))
	}
	switch {
	case m.GuildID != "" && m.Provenance.ChannelID != "":
		field("ux.show.where", "<#"+m.Provenance.ChannelID+">")
	case m.GuildID == "":
		field("ux.show.where", i18n.T(loc, "ux.show.dm"))
	}
	field("ux.show.when", fmt.Sprintf("<t:%d:f>", m.CreatedAt.Unix()))
	if l := m.LifecycleAt(b.store.Now()); l != memory.LifecycleActive {
		field("ux.show.lifecycle", b.lifecycleText(ctx, loc, owner, m, aud))
	}
	if link := sourceLink(m); link != "" {
		field("ux.show.message", "["+i18n.T(loc, "ux.jump")+"]("+link+")")
	}
	if f := b.entitiesField(ctx, owner, id); f != nil {
		f.Name = i18n.T(loc, "ux.show.entities")
		embed.Fields = append(embed.Fields, f)
		if f := b.mentionedWithField(ctx, owner, id, aud); f != nil {
			f.Name = i18n.T(loc, "ux.show.comention")
			embed.Fields = append(embed.Fields, f)
		}
	}
	if events, err := b.store.Memories.History(ctx, owner, id); err == nil && len(events) > 0 {
		if len(events) > showHistory {
			events = events[len(events)-showHistory:]
		}
		var sb strings.Builder
		for i := len(events) - 1; i >= 0; i-- {
			ev := events[i]
			fmt.Fprintf(&sb, "v%d %s · %s · <t:%d:R>\n", ev.Version, ev.Action, describeActor(ev.Actor), ev.CreatedAt.Unix())
		}
		embed.Fields = append(embed.Fields, &discordgo.MessageEmbedField{Name: i18n.T(loc, "ux.show.history"),
			Value: truncate(strings.TrimSpace(sb.String()), maxEmbedField)})
	}
	fitMemoryEmbed(embed)
	r := &response{embeds: []*discordgo.MessageEmbed{embed}}
	ref := memoryRef{scope: m.Scope, id: m.ID, version: m.Version}
	r.components = []discordgo.MessageComponent{noticeRow(loc, ref, true)}
	return r, nil
}

// lifecycleText says where m stands: "superseded by #12", "disputed with #9", "archived",
// "past". The memory a state names is named only when the audience allows it (it is in
// the same scope, which the caller may see): the state must not point anyone at a memory
// they could not see.
func (b memoryBrowser) lifecycleText(ctx context.Context, loc i18n.Locale, owner memory.Owner, m *memory.Memory, aud *memory.Audience) string {
	word := i18n.T(loc, i18n.Key("choice.lifecycle."+string(m.LifecycleAt(b.store.Now()))))
	if m.StateRef == 0 {
		return word
	}
	ref, err := b.store.Memories.Get(ctx, owner, m.StateRef)
	if err != nil || !aud.Allows(ref) {
		return word
	}
	if m.State == memory.StateSuperseded {
		return i18n.T(loc, "ux.lifecycle.by", word, ref.ID)
	}
	return i18n.T(loc, "ux.lifecycle.with", word, ref.ID)
}

// memoryEmbedChars counts what Discord counts toward an embed's 6,000 characters.
func memoryEmbedChars(e *discordgo.MessageEmbed) int {
	n := utf8.RuneCountInString(e.Title) + utf8.RuneCountInString(e.Description)
	if e.Footer != nil {
		n += utf8.RuneCountInString(e.Footer.Text)
	}
	if e.Author != nil {
		n += utf8.RuneCountInString(e.Author.Name)
	}
	for _, f := range e.Fields {
		n += utf8.RuneCountInString(f.Name) + utf8.RuneCountInString(f.Value)
	}
	return n
}

// fitMemoryEmbed keeps e within Discord's limits: 25 fields, 1,024 characters a field, 4,096 in
// the description and 6,000 in all. Fields past the limits are dropped from the end, then
// the description is shortened.
func fitMemoryEmbed(e *discordgo.MessageEmbed) {
	e.Title = truncate(e.Title, limEmbedTitle)
	e.Description = truncate(e.Description, limEmbedDesc)
	if len(e.Fields) > limEmbedFields {
		e.Fields = e.Fields[:limEmbedFields]
	}
	for _, f := range e.Fields {
		f.Name = truncate(f.Name, limEmbedTitle)
		f.Value = truncate(f.Value, maxEmbedField)
	}
	for len(e.Fields) > 0 && memoryEmbedChars(e) > limEmbedChars && memoryEmbedChars(e)-utf8.RuneCountInString(e.Description) > limEmbedChars/2 {
		e.Fields = e.Fields[:len(e.Fields)-1]
	}
	if over := memoryEmbedChars(e) - limEmbedChars; over > 0 {
		e.Description = truncate(e.Description, max(utf8.RuneCountInString(e.Description)-over, 1))
	}
}

// scopePlace names a scope as the place memories are in: "your personal memory".
func scopePlace(loc i18n.Locale, s memory.Scope) string {
	if s == memory.ScopePersonal {
		return i18n.T(loc, "ux.place.personal")
	}
	return i18n.T(loc, "ux.place.server")
}

// listPage renders one page of a listing with its navigation buttons.
func (b memoryBrowser) listPage(ctx context.Context, c *call, owner memory.Owner, offset int, typ memory.Type) (*response, error) {
	aud := c.audience(ctx)
	mems, total, err := b.store.Memories.List(ctx, owner, memory.ListOptions{Limit: b.pageSize, Offset: offset, Type: typ, Audience: aud})
	if err != nil {
		return nil, err
	}
	l := c.locale()
	if total == 0 {
		if typ != "" {
			return &response{content: i18n.T(l, "list.none.type", i18n.T(l, i18n.Key("choice.type."+string(typ))), describeIn(l, owner))}, nil
		}
		return &response{content: i18n.T(l, "list.none", describeIn(l, owner))}, nil
	}
	if offset >= total {
		// The list shrank since the page was opened; show its last page.
		offset = (total - 1) / b.pageSize * b.pageSize
		mems, total, err = b.store.Memories.List(ctx, owner, memory.ListOptions{Limit: b.pageSize, Offset: offset, Type: typ, Audience: aud})
		if err != nil {
			return nil, err
		}
	}
	var sb strings.Builder
	for _, m := range mems {
		sb.WriteString(memoryLineIn(l, m, owner, c.guildID()))
		sb.WriteString("\n")
	}
	pages := (total + b.pageSize - 1) / b.pageSize
	page := offset/b.pageSize + 1
	title := capitalize(describeIn(l, owner))
	if typ != "" {
		title += " · " + i18n.T(l, i18n.Key("choice.type."+string(typ)))
	}
	embed := &discordgo.MessageEmbed{
		Title:       title,
		Description: sb.String(),
		Color:       colorView,
		Footer:      &discordgo.MessageEmbedFooter{Text: i18n.T(l, "list.footer", page, pages, i18n.N(l, "count.memory", total))},
	}
	r := &response{embeds: []*discordgo.MessageEmbed{embed}}
	if pages > 1 {
		prev := max(offset-b.pageSize, 0)
		next := offset + b.pageSize
		r.components = []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: i18n.T(l, "list.previous"), Style: discordgo.SecondaryButton, Disabled: offset == 0,
				CustomID: pageID(owner.Scope, prev, typ) + ":p"},
			discordgo.Button{Label: i18n.T(l, "list.next"), Style: discordgo.SecondaryButton, Disabled: next >= total,
				CustomID: pageID(owner.Scope, next, typ) + ":n"},
		}}}
	}
	return r, nil
}

// pageID is the custom ID of a page button. The trailing ":p"/":n" added by
// the caller keeps the two buttons' IDs distinct even when both point at
// page one, as Discord requires.
func pageID(scope memory.Scope, offset int, typ memory.Type) string {
	return fmt.Sprintf("%s:%s:%d:%s", idPage, scope, offset, typ)
}

// pagePress shows another page. The owner comes from the person pressing
// and the channel's guild, never from the button, so a page button cannot
// show anyone else's memory.
func (b memoryBrowser) pagePress(ctx context.Context, c *call) (*response, error) {
	parts := strings.Split(c.customID, ":")
	if len(parts) < 5 {
		return nil, errT(memory.EINVALID, "error.old_button")
	}
	owner, err := resolveOwner(parts[2], c.guildID(), c.userID())
	if err != nil {
		return nil, err
	}
	offset, err := strconv.Atoi(parts[3])
	if err != nil || offset < 0 {
		return nil, errT(memory.EINVALID, "error.broken_button")
	}
	typ := memory.Type(parts[4])
	if typ != "" && !typ.Valid() {
		typ = ""
	}
	return b.listPage(ctx, c, owner, offset, typ)
}
