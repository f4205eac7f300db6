package web

import (
	"net/http"

	"github.com/kioku-bot/kioku/memory"
)

// guildGate decides, for the pages under /servers/{guild}/, whether the visit's member may
// open them: the guild must be one they may see and, for some pages, one they edit or
// manage. Every refusal is the same page as a guild that does not exist, so a URL guessed
// for another server, or a manager's page asked for by a member, tells nothing.
type guildGate struct {
	view *views
}

// need is what a page asks of the member beyond seeing the guild.
type need int

const (
	// needMember: any member who may see the guild.
	needMember need = iota
	// needEditor: a member who may change its server memory.
	needEditor
	// needManager: a member who manages the server.
	needManager
)

// open returns the member's access to the path's guild when they have what the page
// needs; otherwise it answers the missing page and returns false.
func (g guildGate) open(w http.ResponseWriter, r *http.Request, v *visit, n need) (server, bool) {
	srv, ok := v.server(r, r.PathValue("guild"))
	switch {
	case !ok, n == needEditor && !srv.Editor, n == needManager && !srv.Manager:
		g.view.notFound(w, r, v)
		return server{}, false
	}
	return srv, true
}

// channelAudience is what a page of srv may show: the memories of the channels the member
// can view there.
func channelAudience(srv server) *memory.Audience {
	return &memory.Audience{Channels: srv.Channels}
}
