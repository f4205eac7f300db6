package bot

// /memory undo: revert the last change to a memory.

import (
	"context"
	"errors"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// memoryUndo reverts the last change to a memory: a forget is recovered, an edit restored,
// an addition forgotten. It takes the permissions of an edit and its checks in the same
// order, so a memory the caller may not see answers exactly like one that does not exist:
// the scope comes from the caller (another member's personal memory is not in it), server
// memory needs an editor before any lookup, and a memory learned in a channel the caller
// cannot view is reported as missing.
func (b memoryCommands) memoryUndo(ctx context.Context, c *call) (*response, error) {
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
	version, _ := c.options.integer("version")
	res, err := b.store.Memories.UndoAs(ctx, c.writeContext(ctx), owner, id, int(version), memory.UserActor(c.userID()))
	if errors.Is(err, memory.ErrChangedSince) {
		return nil, errT(memory.ECONFLICT, "undo.error.changed", id, id, scopeArg(owner))
	}
	if err != nil {
		return nil, err
	}
	c.log.Info("memory change undone by command", "memory_id", id, "scope", owner.Scope, "history_id", res.Change.ID,
		"undone", res.Change.Action, "version", res.Memory.Version)
	m := res.Memory
	l := c.locale()
	what := i18n.T(l, "undo.what", i18n.T(l, i18n.Key("undo.change."+string(res.Change.Action))), scopeName(l, owner), id,
		describeActorIn(l, res.Change.Actor))
	switch res.Action {
	case memory.ActionRecover:
		return &response{content: i18n.T(l, "undo.recovered", what, m.Version, oneLine(m.Content, 300))}, nil
	case memory.ActionDelete:
		return &response{content: i18n.T(l, "undo.forgotten", what, id, scopeArg(owner), b.recoverWindow(l))}, nil
	}
	return &response{content: i18n.T(l, "undo.restored", what, m.Version, oneLine(m.Content, 300))}, nil
}
