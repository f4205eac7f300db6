package tools

import "github.com/kioku-bot/kioku/memory"

// mayChangeServer checks the rule for server memory changed through the model (SPEC §2
// "Who may change server memory through the model"): with self-teaching on anyone's
// conversation may add server memories, but updating or forgetting one needs the speaker
// to have authored it or to hold the server-memory permission. Otherwise one member could
// talk the model into rewriting or erasing what others, or the admins, taught the server.
func (tb *Toolbox) mayChangeServer(m *memory.Memory) error {
	if m.Scope != memory.ScopeServer || tb.conv.ServerEditor {
		return nil
	}
	if m.Provenance.AuthorID != "" && m.Provenance.AuthorID == tb.conv.Speaker.UserID {
		return nil
	}
	return memory.Errorf(memory.EFORBIDDEN, "Refused: server memory #%d was saved by someone else, and only its author or members allowed to edit this server's memory (Manage Server or the editor role) may change or forget it. Tell %s; they can ask a server admin, who can use /memory edit or /memory forget.",
		m.ID, nameOf(tb.conv.Speaker))
}
