package bot

// Actionable notices: every "📌 Remembered / ✏️ Updated / 🗑️ Forgot" line kioku shows
// carries an Undo button (and, while the memory exists, an Edit button). All the state a
// press needs is in the custom ID ("kioku:undo:s:42:3": action, scope, memory id, the
// version the notice showed), so the buttons keep working after a restart; everything
// else (who may press, whether the memory is still at that version, whether the recover
// window has passed) is read from the presser and the database at press time.

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/chat"
	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/tools"
)

// interactiveHandlers are the handlers of the buttons and forms of this file's family
// (actions.go, modals.go, browse.go), added beside commandHandlers.
func interactiveHandlers(f *memoryForms, br *memoryBrowser) map[string]commandHandler {
	return map[string]commandHandler{
		idUndo:      f.undoPress,
		idEdit:      f.editPress,
		idEditModal: f.editSubmit,
		idAddModal:  f.addSubmit,
		idList:      br.browsePress,
	}
}

// Custom ID prefixes of the notice buttons, the modals and the browsing buttons.
const (
	idUndo      = "kioku:undo"
	idEdit      = "kioku:edit"
	idEditModal = "kioku:editm"
	idAddModal  = "kioku:addm"
	idList      = "kioku:list"
)

// Discord's limits on what a message and an embed may carry.
const (
	limActionRows  = 5
	limEmbedFields = 25
	limEmbedChars  = 6000
	limEmbedDesc   = 4096
	limEmbedTitle  = 256
	limChoices     = 25
	limChoiceName  = 100
	limCustomID    = 100
	limModalTitle  = 45
	limTextInput   = 4000
)

// memoryRef is what a notice button or an edit modal names: one memory at one version,
// in the server's or the presser's personal scope.
type memoryRef struct {
	scope   memory.Scope
	id      int64
	version int
}

// scopeLetter is the scope as it appears in a custom ID.
func scopeLetter(s memory.Scope) string {
	if s == memory.ScopePersonal {
		return "p"
	}
	return "s"
}

// refID renders the custom ID of prefix for ref.
func refID(prefix string, ref memoryRef) string {
	return fmt.Sprintf("%s:%s:%d:%d", prefix, scopeLetter(ref.scope), ref.id, ref.version)
}

// refPattern is the only shape a memory reference custom ID may have: ids and versions are
// positive decimal numbers without leading zeros, small enough to fit their types.
var refPattern = regexp.MustCompile(`^(kioku:(?:undo|edit|editm)):([sp]):([1-9][0-9]{0,17}):([1-9][0-9]{0,8})$`)

// parseRef reads a memory reference custom ID of prefix. Custom IDs come from the client
// and are treated as attacker input: anything but the exact shape is refused.
func parseRef(customID, prefix string) (memoryRef, bool) {
	m := refPattern.FindStringSubmatch(customID)
	if m == nil || m[1] != prefix {
		return memoryRef{}, false
	}
	id, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return memoryRef{}, false
	}
	version, err := strconv.Atoi(m[4])
	if err != nil {
		return memoryRef{}, false
	}
	ref := memoryRef{scope: memory.ScopeServer, id: id, version: version}
	if m[2] == "p" {
		ref.scope = memory.ScopePersonal
	}
	return ref, true
}

// refOwner is the scope a reference names for the member pressing: the server's memory of
// the guild the press happens in, or the presser's own personal memory, never anyone
// else's, whoever the button was made for. Server memory does not exist in DMs.
func (c *call) refOwner(ref memoryRef) (memory.Owner, bool) {
	if ref.scope == memory.ScopePersonal {
		return memory.PersonalOwner(c.userID()), true
	}
	if c.inDM() {
		return memory.Owner{}, false
	}
	return memory.ServerOwner(c.guildID()), true
}

// uxLocale is the language of the member interacting.
func (c *call) uxLocale() i18n.Locale { return c.locale() }

// noticeRow is the Undo (and Edit) buttons of one change.
func noticeRow(loc i18n.Locale, ref memoryRef, edit bool) discordgo.ActionsRow {
	row := discordgo.ActionsRow{Components: []discordgo.MessageComponent{
		discordgo.Button{Label: i18n.T(loc, "ux.button.undo", ref.id), Style: discordgo.SecondaryButton,
			CustomID: refID(idUndo, ref), Emoji: &discordgo.ComponentEmoji{Name: "↩️"}},
	}}
	if edit {
		row.Components = append(row.Components, discordgo.Button{Label: i18n.T(loc, "ux.button.edit", ref.id),
			Style: discordgo.SecondaryButton, CustomID: refID(idEdit, ref), Emoji: &discordgo.ComponentEmoji{Name: "✏️"}})
	}
	return row
}

// setNotice puts the buttons of the change a command just made under its reply: Undo, and
// Edit unless the change forgot the memory.
func (c *call) setNotice(m *memory.Memory, forgotten bool) {
	if m == nil {
		return
	}
	ref := memoryRef{scope: m.Scope, id: m.ID, version: m.Version}
	c.notice = []discordgo.MessageComponent{noticeRow(c.uxLocale(), ref, !forgotten)}
}

// noticeComponents are the buttons under a chat reply, one row per memory change the turn
// made, in order. Discord allows five rows; changes past the fifth keep their text line
// and /memory undo.
func noticeComponents(loc i18n.Locale, notices []chat.Notice) []discordgo.MessageComponent {
	var rows []discordgo.MessageComponent
	for _, n := range notices {
		if len(rows) == limActionRows {
			break
		}
		if n.MemoryID <= 0 || n.Version <= 0 {
			continue
		}
		ref := memoryRef{scope: n.Scope, id: n.MemoryID, version: n.Version}
		rows = append(rows, noticeRow(loc, ref, n.Action != tools.NoticeDeleted))
	}
	return rows
}

// forgottenRows are the Undo buttons of memories forgotten together, one row each, at most
// five (Discord's limit); the rest can be recovered with /memory recover.
func forgottenRows(loc i18n.Locale, gone []*memory.Memory) []discordgo.MessageComponent {
	var rows []discordgo.MessageComponent
	for _, m := range gone {
		if len(rows) == limActionRows {
			break
		}
		rows = append(rows, noticeRow(loc, memoryRef{scope: m.Scope, id: m.ID, version: m.Version}, false))
	}
	return rows
}
