package bot

import (
	"context"
	"slices"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

// CanManageServer reports whether a guild member may configure the bot:
// Manage Server, or Administrator (which implies it). The permissions are
// the ones Discord computed for the member in the interaction's channel,
// so the check needs no role lookups and cannot be spoofed by the client.
func CanManageServer(m *discordgo.Member) bool {
	if m == nil {
		return false
	}
	return m.Permissions&(discordgo.PermissionManageGuild|discordgo.PermissionAdministrator) != 0
}

// CanEditServer reports whether a guild member may change the guild's
// server memory: anyone who can manage the server, plus members holding the
// editor role chosen with /kioku config.
func CanEditServer(m *discordgo.Member, editorRoleID string) bool {
	if CanManageServer(m) {
		return true
	}
	return m != nil && editorRoleID != "" && slices.Contains(m.Roles, editorRoleID)
}

// requireServerEditor returns a clear EFORBIDDEN error unless the caller
// may change this guild's server memory. It is checked on every mutation,
// including button presses that execute an earlier preview, because roles
// can change between the two.
func (b permissions) requireServerEditor(ctx context.Context, c *call) error {
	if c.inDM() {
		return errServerInDM
	}
	gs, err := b.store.Settings.GuildSettings(ctx, c.guildID())
	if err != nil {
		return err
	}
	if CanEditServer(c.member, gs.EditorRoleID) {
		return nil
	}
	if gs.EditorRoleID != "" {
		return errT(memory.EFORBIDDEN, "error.server_editor.role", gs.EditorRoleID)
	}
	return errT(memory.EFORBIDDEN, "error.server_editor")
}

// requireManager returns EFORBIDDEN unless the caller may configure the bot.
func (b permissions) requireManager(c *call) error {
	if c.inDM() {
		return errNoGuild
	}
	if !CanManageServer(c.member) {
		return errT(memory.EFORBIDDEN, "error.manager")
	}
	return nil
}

// requireNotFullPrivacy refuses manual writes of personal memory for users
// at the full privacy level (SPEC §2): they asked the bot to keep nothing.
// Forget and export stay available so they can still leave.
func (b permissions) requireNotFullPrivacy(ctx context.Context, c *call) error {
	us, err := b.store.Settings.UserSettings(ctx, c.userID())
	if err != nil {
		return err
	}
	if us.Privacy == memory.PrivacyFull {
		return errT(memory.EFORBIDDEN, "error.privacy_full")
	}
	return nil
}

// errServerInDM explains the scope rule of DMs.
var errServerInDM = errT(memory.EINVALID, "error.server_in_dm")

// owner resolves the scope option of a /memory command: personal is always
// the caller's own memory, server is the memory of the guild the command
// runs in. In DMs only personal exists; in a guild the default is server.
func (c *call) owner() (memory.Owner, error) {
	return resolveOwner(c.options.str("scope"), c.guildID(), c.userID())
}

func resolveOwner(scope, guildID, userID string) (memory.Owner, error) {
	switch scope {
	case "", string(memory.ScopeServer), string(memory.ScopePersonal):
	default:
		return memory.Owner{}, errT(memory.EINVALID, "error.scope", scope)
	}
	if guildID == "" {
		if scope == string(memory.ScopeServer) {
			return memory.Owner{}, errServerInDM
		}
		return memory.PersonalOwner(userID), nil
	}
	if scope == string(memory.ScopePersonal) {
		return memory.PersonalOwner(userID), nil
	}
	return memory.ServerOwner(guildID), nil
}

// requireWrite checks that the caller may change memory of owner.
func (b permissions) requireWrite(ctx context.Context, c *call, owner memory.Owner) error {
	if owner.Scope == memory.ScopeServer {
		return b.requireServerEditor(ctx, c)
	}
	if owner.UserID != c.userID() {
		// Unreachable through resolveOwner; kept so a future handler that
		// builds owners by hand cannot touch someone else's memory.
		return errT(memory.EFORBIDDEN, "error.personal_owner")
	}
	return nil
}

// messageServerEditor reports whether the author of a guild message may change the
// guild's server memory, for the chat turn's model tools (SPEC §2 "Who may change server
// memory through the model"). Messages carry no computed permissions, so Manage Server is
// computed from the guild's roles and channel overwrites in the session state with the
// roles that came with the message; the editor role is read from the message's member.
// Anything unknown (no member, a guild not in state) counts as no permission.
func (b permissions) messageServerEditor(ctx context.Context, m *discordgo.Message, settings *messageSettings) bool {
	if m.GuildID == "" || m.Member == nil || m.Author == nil {
		return false
	}
	if b.session.State != nil {
		if perms, err := b.session.State.MessagePermissions(m); err == nil &&
			perms&(discordgo.PermissionManageGuild|discordgo.PermissionAdministrator) != 0 {
			return true
		}
	}
	if len(m.Member.Roles) == 0 {
		return false
	}
	gs, err := settings.guild(ctx)
	if err != nil {
		return false
	}
	return gs.EditorRoleID != "" && slices.Contains(m.Member.Roles, gs.EditorRoleID)
}

// checkWrite combines the checks of every manual write: permission for
// server memory, privacy level for personal memory.
func (b permissions) checkWrite(ctx context.Context, c *call, owner memory.Owner) error {
	if err := b.requireWrite(ctx, c, owner); err != nil {
		return err
	}
	if owner.Scope == memory.ScopePersonal {
		return b.requireNotFullPrivacy(ctx, c)
	}
	return nil
}
