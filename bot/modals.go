package bot

// Modals: /memory add and /memory edit without content, and the Edit button of notices,
// open a form with multi-line content, type and tags. What the form sends back is checked
// like the command's options; a mistake is answered with what is wrong, and nothing is
// saved.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// The fields of the memory modals.
const (
	fieldContent = "content"
	fieldType    = "type"
	fieldTags    = "tags"
)

// maxTagsInput is the longest tags field accepted, as for the tags option.
const maxTagsInput = 200

// openModal answers the interaction with a modal.
func (c *call) openModal(ctx context.Context, data *discordgo.InteractionResponseData) error {
	if err := c.b.session.InteractionRespond(c.i, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseModal, Data: data},
		discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("couldn't open modal: %w", err)
	}
	return nil
}

// memoryModal is the form of a memory: content (multi-line), type and tags, prefilled.
func memoryModal(loc i18n.Locale, customID, title string, content string, typ memory.Type, tags []string) *discordgo.InteractionResponseData {
	types := make([]string, len(memory.Types))
	for i, t := range memory.Types {
		types[i] = string(t)
	}
	return &discordgo.InteractionResponseData{
		CustomID: customID,
		Title:    truncate(title, limModalTitle),
		Components: []discordgo.MessageComponent{
			discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{
				CustomID: fieldContent, Label: i18n.T(loc, "ux.modal.content"), Style: discordgo.TextInputParagraph,
				Value: truncate(content, limTextInput), Required: true, MinLength: 1, MaxLength: memory.MaxContentRunes,
			}}},
			discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{
				CustomID: fieldType, Label: i18n.T(loc, "ux.modal.type"), Style: discordgo.TextInputShort,
				Value: string(typ), Placeholder: truncate(strings.Join(types, ", "), 100), MaxLength: 20,
			}}},
			discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{
				CustomID: fieldTags, Label: i18n.T(loc, "ux.modal.tags"), Style: discordgo.TextInputShort,
				Value: strings.Join(tags, ", "), Placeholder: i18n.T(loc, "ux.modal.tags.placeholder"), MaxLength: maxTagsInput,
			}}},
		},
	}
}

// editModal is the form that edits m, carrying the version it shows.
func editModal(loc i18n.Locale, m *memory.Memory) *discordgo.InteractionResponseData {
	ref := memoryRef{scope: m.Scope, id: m.ID, version: m.Version}
	return memoryModal(loc, refID(idEditModal, ref), i18n.T(loc, "ux.modal.edit.title", m.ID), m.Content, m.Type, m.Tags)
}

// modalValues reads the text inputs of a submitted modal by custom ID.
func modalValues(i *discordgo.Interaction) map[string]string {
	out := map[string]string{}
	data, ok := i.Data.(discordgo.ModalSubmitInteractionData)
	if !ok {
		return out
	}
	var walk func(cs []discordgo.MessageComponent)
	walk = func(cs []discordgo.MessageComponent) {
		for _, comp := range cs {
			switch v := comp.(type) {
			case *discordgo.ActionsRow:
				walk(v.Components)
			case discordgo.ActionsRow:
				walk(v.Components)
			case *discordgo.TextInput:
				out[v.CustomID] = v.Value
			case discordgo.TextInput:
				out[v.CustomID] = v.Value
			}
		}
	}
	walk(data.Components)
	return out
}

// memoryForm is what a memory modal sent, checked.
type memoryForm struct {
	content string
	typ     memory.Type
	tags    []string
}

// readMemoryForm checks a submitted memory modal the way the command options are checked,
// and says what is wrong in the member's language.
func readMemoryForm(loc i18n.Locale, i *discordgo.Interaction) (memoryForm, error) {
	v := modalValues(i)
	f := memoryForm{content: strings.TrimSpace(v[fieldContent])}
	switch n := utf8.RuneCountInString(f.content); {
	case n == 0:
		return f, uxError(loc, memory.EINVALID, "ux.modal.invalid.empty")
	case n > memory.MaxContentRunes:
		return f, uxError(loc, memory.EINVALID, "ux.modal.invalid.long", n, memory.MaxContentRunes)
	}
	if t := strings.ToLower(strings.TrimSpace(v[fieldType])); t != "" {
		f.typ = memory.Type(t)
		if !f.typ.Valid() {
			types := make([]string, len(memory.Types))
			for i, t := range memory.Types {
				types[i] = string(t)
			}
			return f, uxError(loc, memory.EINVALID, "ux.modal.invalid.type", oneLine(t, 30), strings.Join(types, ", "))
		}
	}
	tags := v[fieldTags]
	if utf8.RuneCountInString(tags) > maxTagsInput {
		return f, uxError(loc, memory.EINVALID, "ux.modal.invalid.tags", maxTagsInput)
	}
	// Tags are kept in lower case; reading them so here lets an edit see what really changed.
	f.tags = splitTags(strings.ToLower(tags))
	return f, nil
}

// addModalPattern is the only shape of an add modal's custom ID: the scope and whether
// the memory is pinned, both chosen in the command.
var addModalPattern = regexp.MustCompile(`^kioku:addm:([sp]):([01])$`)

// memoryAddOrModal is /memory add: with content it saves at once; without, it opens the
// form (after the permission checks, so nobody types into a form that cannot be saved).
func (b memoryForms) memoryAddOrModal(ctx context.Context, c *call) (*response, error) {
	if c.options.str("content") != "" {
		return deferred(memoryCommands(b).memoryAdd)(ctx, c)
	}
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	if err := b.requireUXWrite(ctx, c, owner, false); err != nil {
		return nil, err
	}
	pinned, _ := c.options.boolean("pinned")
	pin := "0"
	if pinned {
		pin = "1"
	}
	loc := c.uxLocale()
	id := fmt.Sprintf("%s:%s:%s", idAddModal, scopeLetter(owner.Scope), pin)
	return &response{modal: memoryModal(loc, id, i18n.T(loc, "ux.modal.add.title"), "", memory.Type(c.options.str("type")),
		splitTags(c.options.str("tags")))}, nil
}

// addSubmit saves what the add modal sent, with the checks of /memory add run again: the
// form may have been open for a while.
func (b memoryForms) addSubmit(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	parts := addModalPattern.FindStringSubmatch(c.customID)
	if parts == nil {
		return nil, errUXBroken(loc)
	}
	scope := memory.ScopeServer
	if parts[1] == "p" {
		scope = memory.ScopePersonal
	}
	owner, ok := c.refOwner(memoryRef{scope: scope})
	if !ok {
		return nil, errServerInDM
	}
	f, err := readMemoryForm(loc, c.i)
	if err != nil {
		return nil, err
	}
	if err := b.requireUXWrite(ctx, c, owner, false); err != nil {
		return nil, err
	}
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	m := memory.Memory{
		Scope: owner.Scope, GuildID: c.guildID(), UserID: owner.UserID, Type: f.typ, Content: f.content, Tags: f.tags,
		Pinned: parts[2] == "1", Source: memory.SourceCommand,
		// A modal is not a message: there is nothing to jump to.
		Provenance: memory.Provenance{AuthorID: c.userID(), Author: c.userName(), ChannelID: c.i.ChannelID},
	}
	if r, similar, err := b.dups.answer(ctx, c, memory.HeldWrite{Memory: m}); err != nil || similar {
		return r, err
	}
	res, err := b.store.Memories.RememberAs(ctx, c.writeContext(ctx), m, memory.UserActor(c.userID()))
	if err != nil {
		return nil, err
	}
	c.log.Info("memory added by form", "memory_id", res.Memory.ID, "scope", owner.Scope, "created", res.Created)
	if !res.Created {
		return &response{content: i18n.T(loc, "ux.add.known", res.Memory.ID, oneLine(res.Memory.Content, 300))}, nil
	}
	c.setNotice(res.Memory, false)
	return &response{content: i18n.T(loc, "ux.add.done", uxScopeName(loc, owner.Scope), res.Memory.ID, oneLine(res.Memory.Content, 300))}, nil
}

// memoryEditOrModal is /memory edit: with something to change it changes it at once;
// with only an id it opens the form, prefilled with the memory as it is.
func (b memoryForms) memoryEditOrModal(ctx context.Context, c *call) (*response, error) {
	hasContent := c.options.has("content")
	hasType := c.options.has("type")
	hasTags := c.options.has("tags")
	hasPinned := c.options.has("pinned")
	if hasContent || hasType || hasTags || hasPinned {
		return deferred(memoryCommands(b).memoryEdit)(ctx, c)
	}
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
	m, err := b.store.Memories.Get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	return &response{modal: editModal(c.uxLocale(), m)}, nil
}

// editSubmit applies what the edit modal sent, only while the memory is still at the
// version the form was opened at: an edit made meanwhile is reported, not overwritten.
func (b memoryForms) editSubmit(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	ref, owner, cur, err := b.pressTarget(ctx, c, idEditModal, false)
	if err != nil {
		return nil, err
	}
	f, err := readMemoryForm(loc, c.i)
	if err != nil {
		return nil, err
	}
	if err := b.requireUXWrite(ctx, c, owner, false); err != nil {
		return nil, err
	}
	if cur.Version != ref.version {
		return nil, uxError(loc, memory.ECONFLICT, "ux.edit.conflict", ref.id, ref.version, cur.Version)
	}
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	ch := memory.Change{IfVersion: ref.version, Reason: "edited by command"}
	if f.content != cur.Content {
		ch.Content = &f.content
	}
	if f.typ != "" && f.typ != cur.Type {
		ch.Type = &f.typ
	}
	if !slices.Equal(f.tags, cur.Tags) && (len(f.tags) > 0 || len(cur.Tags) > 0) {
		ch.Tags = &f.tags
	}
	if ch.Content == nil && ch.Type == nil && ch.Tags == nil {
		return &response{content: i18n.T(loc, "ux.edit.unchanged", ref.id)}, nil
	}
	m, err := b.store.Memories.ModifyAs(ctx, c.writeContext(ctx), owner, ref.id, ch, memory.UserActor(c.userID()))
	if memory.ErrorCode(err) == memory.ECONFLICT {
		latest, lerr := b.store.Memories.Get(ctx, owner, ref.id)
		if lerr == nil && latest.Version != ref.version {
			return nil, uxError(loc, memory.ECONFLICT, "ux.edit.conflict", ref.id, ref.version, latest.Version)
		}
	}
	if err != nil {
		return nil, err
	}
	c.log.Info("memory edited by form", "memory_id", m.ID, "scope", owner.Scope, "version", m.Version)
	c.setNotice(m, false)
	return &response{content: i18n.T(loc, "ux.edit.done", uxScopeName(loc, owner.Scope), m.ID, m.Version, oneLine(m.Content, 300))}, nil
}

// uxScopeName names a scope in loc.
func uxScopeName(loc i18n.Locale, s memory.Scope) string {
	if s == memory.ScopePersonal {
		return i18n.T(loc, "ux.scope.personal")
	}
	return i18n.T(loc, "ux.scope.server")
}
