package bot

// The Undo and Edit buttons of memory notices (see notices.go for their custom IDs).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// uxError is a domain error whose message is the catalogue's key in the member's language.
// Every refusal of the buttons, forms and views is made here, so how they are localized is
// decided in one place.
func uxError(loc i18n.Locale, code string, key i18n.Key, args ...any) error {
	// Catalogued (locale.go), so the edge shows it in the reader's language like every other
	// refusal instead of as another language's detail.
	return &memory.Error{Code: code, Message: i18n.T(loc, key, args...), Err: &catalogued{key: key, args: args}}
}

// errUXNotFound is the one answer for a memory the presser may not know about: it does not
// exist, it is someone else's personal memory, it belongs to another server, or it was
// learned in a channel the presser cannot view. All read the same, so a button (or a
// forged custom ID) reveals nothing.
func errUXNotFound(loc i18n.Locale, id int64) error {
	return uxError(loc, memory.ENOTFOUND, "ux.notfound", id)
}

// errUXBroken answers a custom ID that is not one kioku makes.
func errUXBroken(loc i18n.Locale) error {
	return uxError(loc, memory.EINVALID, "ux.button.broken")
}

// pressTarget resolves the memory a notice button or edit modal names, for the member
// pressing: it must parse exactly, be in a scope the presser has (their own personal
// memory, or the server memory of the guild they press in), exist (forgotten ones too when
// includeForgotten) and come from a channel the presser can view. Every failure is the
// same "not found".
func (b memoryForms) pressTarget(ctx context.Context, c *call, prefix string, includeForgotten bool) (memoryRef, memory.Owner, *memory.Memory, error) {
	loc := c.uxLocale()
	ref, ok := parseRef(c.customID, prefix)
	if !ok {
		return memoryRef{}, memory.Owner{}, nil, errUXBroken(loc)
	}
	owner, ok := c.refOwner(ref)
	if !ok {
		return ref, owner, nil, errUXNotFound(loc, ref.id)
	}
	var (
		m   *memory.Memory
		err error
	)
	if includeForgotten {
		m, err = b.store.Channels.Lookup(ctx, owner, ref.id)
	} else {
		m, err = b.store.Memories.Get(ctx, owner, ref.id)
	}
	if memory.ErrorCode(err) == memory.ENOTFOUND {
		return ref, owner, nil, errUXNotFound(loc, ref.id)
	}
	if err != nil {
		return ref, owner, nil, err
	}
	if !c.audience(ctx).Allows(m) {
		return ref, owner, nil, errUXNotFound(loc, ref.id)
	}
	return ref, owner, m, nil
}

// requireUXWrite is checkWrite with a localized refusal: server memory needs an editor,
// personal memory a privacy level that lets kioku keep things.
func (b memoryForms) requireUXWrite(ctx context.Context, c *call, owner memory.Owner, forgetting bool) error {
	loc := c.uxLocale()
	if owner.Scope == memory.ScopeServer {
		gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
		if err != nil {
			return err
		}
		if CanEditServer(c.member, gs.EditorRoleID) {
			return nil
		}
		return uxError(loc, memory.EFORBIDDEN, "ux.forbidden.server")
	}
	if forgetting {
		// Forgetting stays open at every privacy level: it is how people leave.
		return nil
	}
	us, err := b.store.Settings.UserSettings(ctx, c.userID())
	if err != nil {
		return err
	}
	if us.Privacy == memory.PrivacyFull {
		return uxError(loc, memory.EFORBIDDEN, "ux.forbidden.privacy")
	}
	return nil
}

// undoPress reverts the change a notice showed, with the checks of /memory undo: the
// memory must be visible to the presser in a scope they have, server memory needs an
// editor (or to be the presser's own change), and the memory must still be at the
// notice's version. A press after the recover
// window is refused, and a press after the change was already undone changes nothing.
func (b memoryForms) undoPress(ctx context.Context, c *call) (*response, error) {
	c.ownReply = true
	loc := c.uxLocale()
	ref, owner, cur, err := b.pressTarget(ctx, c, idUndo, true)
	if err != nil {
		return nil, err
	}
	// Acknowledged only now: an undo re-indexes the memory, which may call the embedding
	// model, while the refusals above are instant.
	if err := c.deferReply(ctx); err != nil {
		return nil, err
	}
	events, err := b.store.Memories.History(ctx, owner, ref.id)
	if err != nil {
		return nil, err
	}
	shown := changeAt(events, ref.version)
	// The member whose change (by command, or by kioku in their conversation) the notice
	// shows may take it back, as the conversation lets them change what they saved; anyone
	// else needs the permission of /memory undo.
	if owner.Scope != memory.ScopeServer || shown == nil || !madeBy(shown.Actor, c.userID()) {
		if err := b.requireUXWrite(ctx, c, owner, false); err != nil {
			return nil, err
		}
	}
	if shown == nil {
		return nil, uxError(loc, memory.ECONFLICT, "ux.undo.changed", ref.id, cur.Version)
	}
	if window := b.store.RecoverWindow; window > 0 && b.now().After(shown.CreatedAt.Add(window)) {
		return nil, uxError(loc, memory.EINVALID, "ux.undo.expired", uxDuration(loc, window))
	}
	if cur.Version != ref.version {
		if undoneBy(events, shown, cur.Version) {
			return &response{content: i18n.T(loc, "ux.undo.already", ref.id)}, nil
		}
		return nil, uxError(loc, memory.ECONFLICT, "ux.undo.changed", ref.id, cur.Version)
	}
	res, err := b.store.Memories.UndoAs(ctx, c.writeContext(ctx), owner, ref.id, ref.version, memory.UserActor(c.userID()))
	if errors.Is(err, memory.ErrChangedSince) {
		return nil, uxError(loc, memory.ECONFLICT, "ux.undo.changed", ref.id, cur.Version)
	}
	if err != nil {
		return nil, err
	}
	c.log.Info("memory change undone by button", "memory_id", ref.id, "scope", owner.Scope, "history_id", res.Change.ID,
		"undone", res.Change.Action, "version", res.Memory.Version)
	m := res.Memory
	what := i18n.T(loc, "ux.change."+i18n.Key(res.Change.Action))
	switch res.Action {
	case memory.ActionRecover:
		c.setNotice(m, false)
		return &response{content: i18n.T(loc, "ux.undo.recovered", what, ref.id, m.Version, oneLine(m.Content, 300))}, nil
	case memory.ActionDelete:
		c.setNotice(m, true)
		return &response{content: i18n.T(loc, "ux.undo.forgotten", what, ref.id, uxDuration(loc, b.store.RecoverWindow))}, nil
	}
	c.setNotice(m, false)
	return &response{content: i18n.T(loc, "ux.undo.restored", what, ref.id, m.Version, oneLine(m.Content, 300))}, nil
}

// madeBy reports whether actor is the member userID, directly or through kioku in their
// conversation.
func madeBy(actor memory.Actor, userID string) bool {
	return userID != "" && (actor.UserID() == userID || actor.ModelUserID() == userID)
}

// changeAt returns the applied change that made version of a memory, or nil.
func changeAt(events []memory.HistoryEvent, version int) *memory.HistoryEvent {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Version == version && historyApplied(events[i].Action) {
			return &events[i]
		}
	}
	return nil
}

// undoneBy reports whether the memory's current version was made by undoing shown, and
// nothing since: a second press of the same Undo button. It reads the history reason
// ltm's Undo records ("undo of change N").
func undoneBy(events []memory.HistoryEvent, shown *memory.HistoryEvent, current int) bool {
	at := changeAt(events, current)
	return at != nil && at.Reason == fmt.Sprintf("undo of change %d", shown.ID)
}

// editPress opens the edit modal of a notice's memory, prefilled with what it says now.
// The modal carries the version it was opened at, so an edit made meanwhile is not
// overwritten.
func (b memoryForms) editPress(ctx context.Context, c *call) (*response, error) {
	c.ownReply = true
	_, owner, m, err := b.pressTarget(ctx, c, idEdit, false)
	if err != nil {
		return nil, err
	}
	if err := b.requireUXWrite(ctx, c, owner, false); err != nil {
		return nil, err
	}
	return &response{modal: editModal(c.uxLocale(), m)}, nil
}

// uxDuration renders a duration as people say it in loc: "30 days", "30日".
func uxDuration(loc i18n.Locale, d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return i18n.T(loc, "ux.duration.days", int(d.Hours()/24+0.5))
	case d >= 2*time.Hour:
		return i18n.T(loc, "ux.duration.hours", int(d.Hours()+0.5))
	case d >= 2*time.Minute:
		return i18n.T(loc, "ux.duration.minutes", int(d.Minutes()+0.5))
	case d > time.Second:
		return i18n.T(loc, "ux.duration.seconds", int(d.Seconds()+0.5))
	}
	return i18n.T(loc, "ux.duration.moment")
}
