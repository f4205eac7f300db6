package bot

// The near-duplicate answer: a save (/memory add, its form, Remember this) whose words a
// memory the member may see here already says in other words saves nothing yet. The save
// waits in the store under a short-lived token (Confirmations.HoldWrite: the words never go
// in a custom ID, which holds 100 characters) and the member chooses: Keep both, Replace
// (the new memory supersedes the old one), Merge (one text, confirmed in a form, written
// into the old one) or Cancel. Each press is checked again for the member pressing: the
// held save is found only in their own scope and as theirs, their right to write is read
// again, and the old memory must still be one they may see.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// Custom ID prefixes of the near-duplicate answer's buttons and merge form.
const (
	idDup      = "kioku:dup"
	idDupMerge = "kioku:dupm"
)

// dupQuote bounds each text the answer quotes, so that both and the explanation fit in a
// message's 2,000 characters.
const dupQuote = 600

var (
	// dupPattern: action (keep, replace, merge, cancel), scope, token, the similar memory.
	dupPattern = regexp.MustCompile(`^kioku:dup:([krmc]):([sp]):([0-9a-f]{32}):([1-9][0-9]{0,17})$`)
	// dupMergePattern: scope, token, the similar memory and the version the form showed.
	dupMergePattern = regexp.MustCompile(`^kioku:dupm:([sp]):([0-9a-f]{32}):([1-9][0-9]{0,17}):([1-9][0-9]{0,8})$`)
)

// dupHandlers are the handlers of the near-duplicate answer's buttons and form.
func dupHandlers(d *nearDuplicates) map[string]commandHandler {
	return map[string]commandHandler{idDup: d.dupPress, idDupMerge: d.dupMergeSubmit}
}

// answer holds w and asks the member what to do when a memory they may see here says its
// words again in other words; ok is false when there is none (or it says exactly the same,
// which the write itself answers as already remembered), and the caller saves as usual.
func (b nearDuplicates) answer(ctx context.Context, c *call, w memory.HeldWrite) (*response, bool, error) {
	m := w.Memory
	near, err := b.store.Duplicates.SimilarAs(ctx, c.writeContext(ctx), m.Owner(), m.Content)
	if err != nil || near == nil || near.Hash == memory.Hash(m.Content) {
		return nil, false, err
	}
	token, expires, err := b.store.Confirmations.HoldWrite(ctx, w, memory.UserActor(c.userID()))
	if err != nil {
		return nil, false, err
	}
	c.log.Info("save similar to a memory held for a choice", "memory_id", near.ID, "scope", m.Scope)
	loc := c.uxLocale()
	id := func(action string) string {
		return fmt.Sprintf("%s:%s:%s:%s:%d", idDup, action, scopeLetter(m.Scope), token, near.ID)
	}
	return &response{
		content: i18n.T(loc, "ux.dup.similar", near.ID, oneLine(near.Content, dupQuote), oneLine(m.Content, dupQuote),
			uxDuration(loc, expires.Sub(b.now()))),
		components: []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{
			discordgo.Button{Label: i18n.T(loc, "ux.dup.keep"), Style: discordgo.PrimaryButton, CustomID: id("k")},
			discordgo.Button{Label: i18n.T(loc, "ux.dup.replace", near.ID), Style: discordgo.SecondaryButton, CustomID: id("r")},
			discordgo.Button{Label: i18n.T(loc, "ux.dup.merge", near.ID), Style: discordgo.SecondaryButton, CustomID: id("m")},
			discordgo.Button{Label: i18n.T(loc, "button.cancel"), Style: discordgo.SecondaryButton, CustomID: id("c")},
		}}},
	}, true, nil
}

// dupPress carries out the member's choice.
func (b nearDuplicates) dupPress(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	p := dupPattern.FindStringSubmatch(c.customID)
	if p == nil {
		return nil, errUXBroken(loc)
	}
	owner, ok := c.refOwner(memoryRef{scope: scopeOf(p[2])})
	if !ok {
		return nil, errServerInDM
	}
	action, token := p[1], p[3]
	nearID, _ := strconv.ParseInt(p[4], 10, 64)
	actor := memory.UserActor(c.userID())
	if action == "c" {
		if err := b.store.Confirmations.DropWrite(ctx, owner, token, actor); err != nil {
			return nil, err
		}
		return &response{content: i18n.T(loc, "ux.dup.cancelled")}, nil
	}
	held, err := b.held(ctx, c, owner, token)
	if err != nil {
		return nil, err
	}
	if action == "k" {
		return b.keepBoth(ctx, c, owner, token, held)
	}
	near, err := b.visibleNear(ctx, c, owner, nearID)
	if err != nil {
		return nil, err
	}
	if action == "m" {
		id := fmt.Sprintf("%s:%s:%s:%d:%d", idDupMerge, scopeLetter(owner.Scope), token, near.ID, near.Version)
		return &response{modal: mergeModal(loc, id, near.ID, near.Content)}, nil
	}
	return b.replace(ctx, c, owner, token, held, near)
}

// held reads the save waiting under token for the member pressing, and checks again that
// they may still make it.
func (b nearDuplicates) held(ctx context.Context, c *call, owner memory.Owner, token string) (memory.HeldWrite, error) {
	loc := c.uxLocale()
	held, err := b.store.Confirmations.HeldWrite(ctx, owner, token, memory.UserActor(c.userID()))
	if code := memory.ErrorCode(err); code == memory.ENOTFOUND || code == memory.EEXPIRED {
		return held, uxError(loc, code, "ux.dup.gone")
	}
	if err != nil {
		return held, err
	}
	if err := memoryForms(b).requireUXWrite(ctx, c, owner, false); err != nil {
		return held, err
	}
	// A message's words stay its author's: they may have asked since not to be kept.
	if subject := held.Memory.SubjectID; subject != "" {
		if err := memoryCommands(b).requireAuthorAllows(ctx, c, subject); err != nil {
			return held, err
		}
	}
	return held, nil
}

// visibleNear is the similar memory, when it is still live and the presser may see it here.
func (b nearDuplicates) visibleNear(ctx context.Context, c *call, owner memory.Owner, id int64) (*memory.Memory, error) {
	m, err := b.store.Memories.Get(ctx, owner, id)
	if memory.ErrorCode(err) == memory.ENOTFOUND || (err == nil && !c.audience(ctx).Allows(m)) {
		return nil, errUXNotFound(c.uxLocale(), id)
	}
	return m, err
}

// keepBoth saves the held memory as a memory of its own.
func (b nearDuplicates) keepBoth(ctx context.Context, c *call, owner memory.Owner, token string, held memory.HeldWrite) (*response, error) {
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	res, err := b.save(ctx, c, owner, token, held)
	if err != nil {
		return nil, err
	}
	return b.savedAnswer(c, res), nil
}

// save writes the held memory and lets the held copy go.
func (b nearDuplicates) save(ctx context.Context, c *call, owner memory.Owner, token string, held memory.HeldWrite) (memory.WriteResult, error) {
	actor := memory.UserActor(c.userID())
	res, err := b.store.Memories.RememberAs(ctx, c.writeContext(ctx), held.Memory, actor, held.Evidence...)
	if err != nil {
		return res, err
	}
	c.log.Info("memory added after a near-duplicate answer", "memory_id", res.Memory.ID, "scope", owner.Scope, "created", res.Created)
	return res, b.store.Confirmations.DropWrite(ctx, owner, token, actor)
}

// savedAnswer says what a save did, with the Undo and Edit buttons of a new memory.
func (b nearDuplicates) savedAnswer(c *call, res memory.WriteResult) *response {
	loc := c.uxLocale()
	if !res.Created {
		return &response{content: i18n.T(loc, "ux.add.known", res.Memory.ID, oneLine(res.Memory.Content, 300))}
	}
	c.setNotice(res.Memory, false)
	return &response{content: i18n.T(loc, "ux.add.done", uxScopeName(loc, res.Memory.Scope), res.Memory.ID, oneLine(res.Memory.Content, 300))}
}

// replace lets the held memory take near's place. When everyone who will see the new
// memory may see near, it is saved and near marked superseded by it; otherwise a new memory
// here could not name near (its state would point readers of this channel at a memory of a
// channel they may not read), so near takes the new words itself, as an edit would.
func (b nearDuplicates) replace(ctx context.Context, c *call, owner memory.Owner, token string, held memory.HeldWrite, near *memory.Memory) (*response, error) {
	loc := c.uxLocale()
	actor := memory.UserActor(c.userID())
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	if !held.Memory.SeenByAllWhoSee(near) {
		content := held.Memory.Content
		m, err := b.store.Memories.ModifyAs(ctx, c.writeContext(ctx), owner, near.ID,
			memory.Change{Content: &content, Reason: "replaced by a similar save"}, actor)
		if err != nil {
			return nil, err
		}
		if err := b.store.Confirmations.DropWrite(ctx, owner, token, actor); err != nil {
			return nil, err
		}
		c.setNotice(m, false)
		return &response{content: i18n.T(loc, "ux.dup.replaced_into", m.ID, m.Version, oneLine(m.Content, 300))}, nil
	}
	res, err := b.save(ctx, c, owner, token, held)
	if err != nil {
		return nil, err
	}
	r := b.savedAnswer(c, res)
	if res.Memory.ID == near.ID {
		return r, nil
	}
	_, err = b.store.Review.Supersede(ctx, owner, near.ID, res.Memory.ID, actor, fmt.Sprintf("replaced by #%d", res.Memory.ID))
	var domain *memory.Error
	switch {
	case err == nil:
		r.content += "\n" + i18n.T(loc, "ux.dup.superseded", near.ID, res.Memory.ID)
	case errors.As(err, &domain):
		// The new memory is saved; what kept near from being marked is said, not hidden.
		r.content += "\n" + i18n.T(loc, "ux.dup.not_superseded", near.ID, errorText(err, loc))
	default:
		return nil, err
	}
	c.log.Info("memory superseded after a near-duplicate answer", "memory_id", near.ID, "by", res.Memory.ID, "scope", owner.Scope)
	return r, nil
}

// dupMergeSubmit writes the text the member confirmed into the similar memory, while it is
// still at the version the form showed, and lets the held save go.
func (b nearDuplicates) dupMergeSubmit(ctx context.Context, c *call) (*response, error) {
	loc := c.uxLocale()
	p := dupMergePattern.FindStringSubmatch(c.customID)
	if p == nil {
		return nil, errUXBroken(loc)
	}
	// The form came from the answer's message: its result takes that message's place.
	c.modalUpdates = true
	owner, ok := c.refOwner(memoryRef{scope: scopeOf(p[1])})
	if !ok {
		return nil, errServerInDM
	}
	token := p[2]
	nearID, _ := strconv.ParseInt(p[3], 10, 64)
	version, _ := strconv.Atoi(p[4])
	f, err := readMemoryForm(loc, c.i)
	if err != nil {
		return nil, err
	}
	if _, err := b.held(ctx, c, owner, token); err != nil {
		return nil, err
	}
	near, err := b.visibleNear(ctx, c, owner, nearID)
	if err != nil {
		return nil, err
	}
	if near.Version != version {
		return nil, uxError(loc, memory.ECONFLICT, "ux.edit.conflict", near.ID, version, near.Version)
	}
	actor := memory.UserActor(c.userID())
	if f.content == near.Content {
		if err := b.store.Confirmations.DropWrite(ctx, owner, token, actor); err != nil {
			return nil, err
		}
		return &response{content: i18n.T(loc, "ux.dup.unchanged", near.ID)}, nil
	}
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	m, err := b.store.Memories.ModifyAs(ctx, c.writeContext(ctx), owner, near.ID,
		memory.Change{Content: &f.content, IfVersion: version, Reason: "merged with a similar save"}, actor)
	if err != nil {
		return nil, err
	}
	if err := b.store.Confirmations.DropWrite(ctx, owner, token, actor); err != nil {
		return nil, err
	}
	c.log.Info("similar save merged into a memory", "memory_id", m.ID, "scope", owner.Scope, "version", m.Version)
	c.setNotice(m, false)
	return &response{content: i18n.T(loc, "ux.dup.merged", m.ID, m.Version, oneLine(m.Content, 300))}, nil
}
