package web

import (
	"net/http"
	"slices"
	"time"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// "My memory", what kioku holds about the member beyond their personal memories (the
// /me?view=server tab): server memories they authored, memories whose subject they are,
// and their transcript turns still held. Each is shown only where the member may see it (a
// server of the session, a channel of their audience); the rest is counted, never shown,
// and forget-me still removes what it covers. Read-only: server memory is changed on the
// server's page, or with /memory.

// elsewhereLimit is how many memories or turns each section shows.
const elsewhereLimit = 50

// elsewhereBody is the tab's.
type elsewhereBody struct {
	Authored, About []memoryView
	// AuthoredHidden and AboutHidden count the memories the member may not see here.
	AuthoredHidden, AboutHidden int
	Turns                       []turnView
	// TurnsTotal counts all their turns held; TurnsHidden those of the newest that are
	// from channels they may not see here.
	TurnsTotal, TurnsHidden int
	// Review links the member's own review queue.
	Review bool
}

// turnView is one transcript turn as the tab shows it.
type turnView struct {
	Who, Where, Content string
	When, WhenISO       string
}

// elsewherePage fills and shows the tab.
func (mm *myMemory) elsewherePage(w http.ResponseWriter, r *http.Request, v *visit) {
	body := elsewhereBody{Review: mm.reviewing}
	err := mm.authored(r, v, &body)
	if err == nil {
		err = mm.aboutMe(r, v, &body)
	}
	if err == nil {
		err = mm.turns(r, v, &body)
	}
	if err != nil {
		mm.view.internal(w, r, v, "couldn't read what kioku holds about a member", err)
		return
	}
	mm.view.render(w, r, v, http.StatusOK, "elsewhere", "web.me.title", body)
}

// authored lists, per server of the session, the server memories the member authored that
// their audience allows, and counts those it does not.
func (mm *myMemory) authored(r *http.Request, v *visit, body *elsewhereBody) error {
	ctx, aud := r.Context(), v.audience(r)
	for _, g := range v.sess.GuildIDs {
		owner := memory.ServerOwner(g)
		mems, shown, err := mm.deps.Memories.List(ctx, owner, memory.ListOptions{AuthorID: v.sess.UserID, Audience: aud,
			Limit: elsewhereLimit})
		if err != nil {
			return err
		}
		_, all, err := mm.deps.Memories.List(ctx, owner, memory.ListOptions{AuthorID: v.sess.UserID, Limit: 1})
		if err != nil {
			return err
		}
		body.AuthoredHidden += max(all-shown, 0)
		for _, m := range mems {
			if len(body.Authored) < elsewhereLimit {
				body.Authored = append(body.Authored, viewOf(v.lang, m))
			}
		}
	}
	return nil
}

// aboutMe lists the memories whose subject is the member that they may see here: server
// memories of a server of the session, learned where their audience allows. Another
// member's personal memory about them, or a server memory of a hidden channel, is counted.
func (mm *myMemory) aboutMe(r *http.Request, v *visit, body *elsewhereBody) error {
	mems, total, err := mm.deps.Overview.AboutMember(r.Context(), v.sess.UserID, elsewhereLimit)
	if err != nil {
		return err
	}
	aud := v.audience(r)
	for _, m := range mems {
		if m.Scope == memory.ScopeServer && slices.Contains(v.sess.GuildIDs, m.GuildID) && aud.Allows(m) {
			body.About = append(body.About, viewOf(v.lang, m))
		}
	}
	body.AboutHidden = total - len(body.About)
	return nil
}

// turns counts the member's transcript turns and shows the newest of them said in a DM or
// in a channel of their audience.
func (mm *myMemory) turns(r *http.Request, v *visit, body *elsewhereBody) error {
	ctx := r.Context()
	total, err := mm.deps.Turns.CountTurns(ctx, v.sess.UserID)
	if err != nil {
		return err
	}
	body.TurnsTotal = total
	turns, err := mm.deps.Turns.UserTurns(ctx, v.sess.UserID, elsewhereLimit)
	if err != nil {
		return err
	}
	aud := v.audience(r)
	for _, t := range turns {
		if !turnVisible(v, aud, t) {
			body.TurnsHidden++
			continue
		}
		body.Turns = append(body.Turns, turnViewOf(v.lang, t))
	}
	return nil
}

// turnVisible reports whether the member may read turn t here: one of their DMs, or a
// channel of a server of the session that their audience allows.
func turnVisible(v *visit, aud *memory.Audience, t memory.Turn) bool {
	if t.GuildID == "" {
		return true
	}
	return t.ChannelID != "" && slices.Contains(v.sess.GuildIDs, t.GuildID) && aud.AllowsOrigin(t.GuildID, t.ChannelID)
}

func turnViewOf(l i18n.Locale, t memory.Turn) turnView {
	who := i18n.T(l, "web.turn.you")
	if t.Role == memory.RoleAssistant {
		who = "kioku"
	}
	where := i18n.T(l, "line.from_dms")
	if t.GuildID != "" {
		where = i18n.T(l, "line.from_a_server")
	}
	return turnView{Who: who, Where: where, Content: t.Content, When: t.CreatedAt.UTC().Format("2006-01-02 15:04 MST"),
		WhenISO: t.CreatedAt.UTC().Format(time.RFC3339)}
}
