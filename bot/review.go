package bot

// /memory review: what waits for a person (memory.ReviewItem), one item a page, with Keep,
// Replace, Merge and Forget buttons. A button carries its action, the scope letter, the page
// and the item's ref; everything else (whose queue, who may settle it, what they may see) is
// decided again for the member pressing, so a forged or forwarded button settles nothing of
// anyone else's.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Custom ID prefixes of the review queue's buttons and merge form.
const (
	idReviewPage  = "kioku:rvpage"
	idReviewAct   = "kioku:rvact"
	idReviewMerge = "kioku:rvmerge"
)

// reviewQuote bounds the words of each memory (or proposal) an item quotes: two of them and
// the headings stay within an embed's description.
const reviewQuote = 1500

// maxReviewScan bounds the items read to find one by its ref (the queue's own scan is 500
// review rows and the disputed memories).
const maxReviewScan = 1000

var (
	// reviewPagePattern: direction (which only keeps the two buttons' IDs apart), scope, page.
	reviewPagePattern = regexp.MustCompile(`^kioku:rvpage:[pn]:([sp]):(0|[1-9][0-9]{0,5})$`)
	// reviewActPattern: action, scope, page, item ref.
	reviewActPattern = regexp.MustCompile(`^kioku:rvact:([krmf]):([sp]):(0|[1-9][0-9]{0,5}):([dh][1-9][0-9]{0,17})$`)
	// reviewMergePattern: scope, page, item ref.
	reviewMergePattern = regexp.MustCompile(`^kioku:rvmerge:([sp]):(0|[1-9][0-9]{0,5}):([dh][1-9][0-9]{0,17})$`)
)

// reviewChoices are the actions by their letter in a custom ID.
var reviewChoices = map[string]memory.ReviewChoice{
	"k": memory.ReviewKeep, "r": memory.ReviewReplace, "m": memory.ReviewMerge, "f": memory.ReviewForget,
}

// reviewHandlers are the handlers of /memory review and its buttons and form.
func reviewHandlers(r *memoryReview) map[string]commandHandler {
	return map[string]commandHandler{
		"memory review": r.reviewList,
		idReviewPage:    r.reviewPage,
		idReviewAct:     r.reviewPress,
		idReviewMerge:   r.reviewMergeSubmit,
	}
}

// scopeOf reads a scope letter.
func scopeOf(letter string) memory.Scope {
	if letter == "p" {
		return memory.ScopePersonal
	}
	return memory.ScopeServer
}

// reviewList is /memory review: the first item waiting in the scope.
func (b memoryReview) reviewList(ctx context.Context, c *call) (*response, error) {
	owner, err := c.owner()
	if err != nil {
		return nil, err
	}
	if err := b.requireReviewer(ctx, c, owner); err != nil {
		return nil, err
	}
	return b.reviewView(ctx, c, owner, 0, "")
}

// reviewPage turns a page of the queue, for the member pressing.
func (b memoryReview) reviewPage(ctx context.Context, c *call) (*response, error) {
	p := reviewPagePattern.FindStringSubmatch(c.customID)
	if p == nil {
		return nil, errUXBroken(c.uxLocale())
	}
	owner, ok := c.refOwner(memoryRef{scope: scopeOf(p[1])})
	if !ok {
		return nil, errServerInDM
	}
	if err := b.requireReviewer(ctx, c, owner); err != nil {
		return nil, err
	}
	page, _ := strconv.Atoi(p[2])
	return b.reviewView(ctx, c, owner, page, "")
}

// reviewPress settles an item with Keep, Replace or Forget, or opens the merge form, and
// shows what it did above the item now at that place in the queue. An item settled
// meanwhile, or one the presser may not see, is "not waiting any more".
func (b memoryReview) reviewPress(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	p := reviewActPattern.FindStringSubmatch(c.customID)
	if p == nil {
		return nil, errUXBroken(loc)
	}
	owner, ok := c.refOwner(memoryRef{scope: scopeOf(p[2])})
	if !ok {
		return nil, errServerInDM
	}
	choice, ref := reviewChoices[p[1]], p[4]
	page, _ := strconv.Atoi(p[3])
	if err := b.requireReviewer(ctx, c, owner); err != nil {
		return nil, err
	}
	if err := b.requireSettle(ctx, c, owner, choice); err != nil {
		return nil, err
	}
	if choice == memory.ReviewMerge {
		item, found, err := b.findItem(ctx, c, owner, ref)
		if err != nil {
			return nil, err
		}
		if !found {
			return b.reviewView(ctx, c, owner, page, i18n.T(loc, "ux.review.gone"))
		}
		text, target := item.Memory.Content, item.Memory.ID
		if item.Proposed != "" {
			text = item.Proposed
		}
		id := fmt.Sprintf("%s:%s:%d:%s", idReviewMerge, scopeLetter(owner.Scope), page, ref)
		return &response{modal: mergeModal(loc, id, target, text)}, nil
	}
	return b.settle(ctx, c, owner, page, ref, choice, "")
}

// reviewMergeSubmit merges with the text the member confirmed in the form.
func (b memoryReview) reviewMergeSubmit(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	p := reviewMergePattern.FindStringSubmatch(c.customID)
	if p == nil {
		return nil, errUXBroken(loc)
	}
	// The form came from the queue's message: its answer takes that message's place.
	c.modalUpdates = true
	owner, ok := c.refOwner(memoryRef{scope: scopeOf(p[1])})
	if !ok {
		return nil, errServerInDM
	}
	page, _ := strconv.Atoi(p[2])
	f, err := readMemoryForm(loc, c.i)
	if err != nil {
		return nil, err
	}
	if err := b.requireReviewer(ctx, c, owner); err != nil {
		return nil, err
	}
	if err := b.requireSettle(ctx, c, owner, memory.ReviewMerge); err != nil {
		return nil, err
	}
	return b.settle(ctx, c, owner, page, p[3], memory.ReviewMerge, f.content)
}

// settle resolves item ref with choice for the member pressing, under their audience, and
// shows the result and the item now at page.
func (b memoryReview) settle(ctx context.Context, c *call, owner memory.Owner, page int, ref string, choice memory.ReviewChoice, text string) (*response, error) {
	loc := c.uxLocale()
	// Acknowledged first: a merge or a replace re-indexes a memory, which may call the
	// embedding model.
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	changed, err := b.store.Review.Resolve(ctx, owner, ref, choice, text, memory.UserActor(c.userID()), c.audience(ctx))
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return b.reviewView(ctx, c, owner, page, i18n.T(loc, "ux.review.gone"))
	}
	if err != nil {
		return nil, err
	}
	c.log.Info("review item settled", "scope", owner.Scope, "ref", ref, "choice", choice, "changed", len(changed))
	r, err := b.reviewView(ctx, c, owner, page, b.settledText(loc, choice, changed))
	if err != nil {
		return nil, err
	}
	// Undo for what changed, under the next item's buttons, within Discord's five rows.
	for _, m := range changed {
		if len(r.components) >= limActionRows {
			break
		}
		r.components = append(r.components, noticeRow(loc, memoryRef{scope: m.Scope, id: m.ID, version: m.Version}, false))
	}
	return r, nil
}

// settledText says what a choice did, memory by memory.
func (b memoryReview) settledText(loc i18n.Locale, choice memory.ReviewChoice, changed []*memory.Memory) string {
	lines := []string{i18n.T(loc, "ux.review.done", i18n.T(loc, i18n.Key("ux.review."+string(choice))))}
	for _, m := range changed {
		switch {
		case m.Deleted():
			lines = append(lines, i18n.T(loc, "ux.review.done.forgot", m.ID, uxDuration(loc, b.store.RecoverWindow)))
		case m.State == memory.StateSuperseded:
			lines = append(lines, i18n.T(loc, "ux.review.done.superseded", m.ID, m.StateRef))
		default:
			lines = append(lines, i18n.T(loc, "ux.review.done.changed", m.ID, m.Version, oneLine(m.Content, 200)))
		}
	}
	if len(changed) == 0 {
		lines = append(lines, i18n.T(loc, "ux.review.done.none"))
	}
	return strings.Join(lines, "\n")
}

// requireReviewer refuses a member who may not change the scope's memories: server memory
// needs an editor (the check of /memory edit); personal memory is always the member's own.
func (b memoryReview) requireReviewer(ctx context.Context, c *call, owner memory.Owner) error {
	if owner.Scope != memory.ScopeServer {
		return nil
	}
	gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		return err
	}
	if !CanEditServer(c.member, gs.EditorRoleID) {
		return uxError(c.uxLocale(), memory.EFORBIDDEN, "ux.review.forbidden")
	}
	return nil
}

// requireSettle adds, after requireReviewer, the privacy rule of manual writes: at the full
// level a member may keep or forget what waits in their personal memory, but not write words
// into it.
func (b memoryReview) requireSettle(ctx context.Context, c *call, owner memory.Owner, choice memory.ReviewChoice) error {
	if owner.Scope == memory.ScopeServer {
		return nil // requireReviewer's check is the whole rule
	}
	return memoryForms(b).requireUXWrite(ctx, c, owner, choice == memory.ReviewKeep || choice == memory.ReviewForget)
}

// findItem finds item ref in the queue the member may see.
func (b memoryReview) findItem(ctx context.Context, c *call, owner memory.Owner, ref string) (memory.ReviewItem, bool, error) {
	items, _, err := b.store.Review.Queue(ctx, owner, c.audience(ctx), maxReviewScan, 0)
	if err != nil {
		return memory.ReviewItem{}, false, err
	}
	for _, it := range items {
		if it.Ref == ref {
			return it, true, nil
		}
	}
	return memory.ReviewItem{}, false, nil
}

// reviewView shows the item at page (the last one when the queue shrank) with its buttons,
// under note.
func (b memoryReview) reviewView(ctx context.Context, c *call, owner memory.Owner, page int, note string) (*response, error) {
	loc := c.uxLocale()
	aud := c.audience(ctx)
	items, total, err := b.store.Review.Queue(ctx, owner, aud, 1, page)
	if err != nil {
		return nil, err
	}
	if total > 0 && len(items) == 0 {
		page = total - 1
		if items, total, err = b.store.Review.Queue(ctx, owner, aud, 1, page); err != nil {
			return nil, err
		}
	}
	if len(items) == 0 {
		empty := i18n.T(loc, "ux.review.empty", scopePlace(loc, owner.Scope))
		if note != "" {
			empty = note + "\n" + empty
		}
		return &response{content: empty}, nil
	}
	item := items[0]
	embed := reviewEmbed(loc, item, owner, c.guildID())
	embed.Title = truncate(i18n.T(loc, "ux.review.title", scopePlace(loc, owner.Scope)), limEmbedTitle)
	embed.Footer = &discordgo.MessageEmbedFooter{Text: i18n.T(loc, "ux.review.footer", page+1, total) + " · " + reviewHint(loc, item)}
	fitMemoryEmbed(embed)
	r := &response{content: note, embeds: []*discordgo.MessageEmbed{embed},
		components: []discordgo.MessageComponent{reviewButtons(loc, item, owner.Scope, page)}}
	if total > 1 {
		letter := scopeLetter(owner.Scope)
		r.components = append(r.components, discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: i18n.T(loc, "ux.list.prev"), Style: discordgo.SecondaryButton, Disabled: page == 0,
				CustomID: fmt.Sprintf("%s:p:%s:%d", idReviewPage, letter, max(page-1, 0))},
			discordgo.Button{Label: i18n.T(loc, "ux.list.next"), Style: discordgo.SecondaryButton, Disabled: page+1 >= total,
				CustomID: fmt.Sprintf("%s:n:%s:%d", idReviewPage, letter, min(page+1, total-1))},
		}})
	}
	return r, nil
}

// reviewEmbed shows an item: what kind it is, the memories it is about (or the proposal),
// and why it waits. Queue listed it only because the member may see all of that.
func reviewEmbed(loc i18n.Locale, item memory.ReviewItem, owner memory.Owner, here string) *discordgo.MessageEmbed {
	kind := i18n.Key("ux.review.kind." + string(item.Kind))
	if item.Kind == memory.ReviewDisputed && item.Other == nil {
		kind = "ux.review.kind.disputed.alone"
	}
	var sb strings.Builder
	sb.WriteString(i18n.T(loc, kind) + "\n\n")
	for _, m := range []*memory.Memory{item.Memory, item.Other} {
		if m != nil {
			sb.WriteString(reviewMemory(loc, m, owner, here) + "\n\n")
		}
	}
	if item.Kind == memory.ReviewProposal {
		if item.Proposed == "" {
			sb.WriteString(i18n.T(loc, "ux.review.proposed.forget", item.Memory.ID))
		} else {
			sb.WriteString(i18n.T(loc, "ux.review.proposed") + "\n> " + truncate(item.Proposed, reviewQuote))
		}
	}
	e := &discordgo.MessageEmbed{Description: strings.TrimSpace(sb.String()), Color: colorConfirm}
	if item.Reason != "" {
		e.Fields = []*discordgo.MessageEmbedField{{Name: i18n.T(loc, "ux.review.reason"), Value: truncate(oneLine(item.Reason, maxEmbedField), maxEmbedField)}}
	}
	return e
}

// reviewMemory is one memory of an item: its list line (number, type, origin, channel) and
// its words, quoted.
func reviewMemory(loc i18n.Locale, m *memory.Memory, owner memory.Owner, here string) string {
	line, _, _ := strings.Cut(browseLine(loc, m, owner, here), "\n")
	return line + "\n> " + truncate(m.Content, reviewQuote)
}

// reviewHint says what each button does for this item.
func reviewHint(loc i18n.Locale, item memory.ReviewItem) string {
	switch {
	case item.Other != nil:
		return i18n.T(loc, "ux.review.hint.pair", item.Memory.ID, item.Other.ID)
	case item.Kind == memory.ReviewProposal:
		return i18n.T(loc, "ux.review.hint.proposal", item.Memory.ID)
	}
	return i18n.T(loc, "ux.review.hint.alone", item.Memory.ID)
}

// reviewButtons are the item's actions; a disputed memory whose partner is gone can only be
// kept or forgotten.
func reviewButtons(loc i18n.Locale, item memory.ReviewItem, scope memory.Scope, page int) discordgo.ActionsRow {
	button := func(letter string, style discordgo.ButtonStyle) discordgo.Button {
		return discordgo.Button{Label: i18n.T(loc, i18n.Key("ux.review."+string(reviewChoices[letter]))), Style: style,
			CustomID: fmt.Sprintf("%s:%s:%s:%d:%s", idReviewAct, letter, scopeLetter(scope), page, item.Ref)}
	}
	row := discordgo.ActionsRow{Components: []discordgo.MessageComponent{button("k", discordgo.SecondaryButton)}}
	if item.Other != nil || item.Kind == memory.ReviewProposal {
		row.Components = append(row.Components, button("r", discordgo.PrimaryButton), button("m", discordgo.PrimaryButton))
	}
	row.Components = append(row.Components, button("f", discordgo.DangerButton))
	return row
}

// mergeModal is the form of a merge: one text, prefilled, that memory #target will say.
func mergeModal(loc i18n.Locale, customID string, target int64, text string) *discordgo.InteractionResponseData {
	return &discordgo.InteractionResponseData{
		CustomID: customID,
		Title:    truncate(i18n.T(loc, "ux.review.merge.title", target), limModalTitle),
		Components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.TextInput{
			CustomID: fieldContent, Label: i18n.T(loc, "ux.review.merge.label"), Style: discordgo.TextInputParagraph,
			Value: truncate(text, limTextInput), Required: true, MinLength: 1, MaxLength: memory.MaxContentRunes,
		}}}},
	}
}
