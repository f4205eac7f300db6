package bot

// /memory undo: revert the last change to a memory.

import (
	"context"
	"errors"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// changeNames are how a reply names the change an undo reverted.
var changeNames = map[memory.Action]string{
	memory.ActionCreate:  "addition",
	memory.ActionImport:  "import",
	memory.ActionUpdate:  "edit",
	memory.ActionDelete:  "forget",
	memory.ActionRecover: "recovery",
}

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
	version, _ := c.integer("version")
	res, err := b.store.Memories.UndoAs(ctx, c.writeContext(ctx), owner, id, int(version), memory.UserActor(c.userID()))
	if errors.Is(err, memory.ErrChangedSince) {
		return nil, memory.Errorf(memory.ECONFLICT, "Memory #%d changed since; see /memory history id:%d%s.", id, id, scopeArg(owner))
	}
	if err != nil {
		return nil, err
	}
	c.log.Info("memory change undone by command", "memory_id", id, "scope", owner.Scope, "history_id", res.Change.ID,
		"undone", res.Change.Action, "version", res.Memory.Version)
	m := res.Memory
	what := fmt.Sprintf("↩️ Undid the %s of (%s) #%d by %s", changeNames[res.Change.Action], owner.Scope, id, describeActor(res.Change.Actor))
	switch res.Action {
	case memory.ActionRecover:
		return &response{content: fmt.Sprintf("%s: it is back, now version %d: %s", what, m.Version, oneLine(m.Content, 300))}, nil
	case memory.ActionDelete:
		return &response{content: fmt.Sprintf("%s: it is forgotten. /memory recover id:%d%s brings it back for %s.",
			what, id, scopeArg(owner), b.recoverWindow())}, nil
	}
	return &response{content: fmt.Sprintf("%s: now version %d: %s", what, m.Version, oneLine(m.Content, 300))}, nil
}
