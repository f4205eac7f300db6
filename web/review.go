package web

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// The review pages: what waits for a person (memory.ReviewItem) in a server's memory, for
// its editors, and in the member's own personal memory, with the actions of /memory review:
// Keep, Replace, Merge (with the text the member confirms) and Forget. A press names only the
// item's ref and the choice; whose queue it is, who may settle it and what they may see are
// decided again for the member pressing, and an item that is settled, missing or hidden from
// them reads the same: "not waiting any more".

// reviewPages serve the review queue of a server and of the member's personal memory.
type reviewPages struct {
	guildGate
	review   Reviewer
	privacy  Privacy
	log      *slog.Logger
	pageSize int
	tabs     tabBar
}

// newReviewPages returns the review pages, or nil when deps lack the review queue.
func newReviewPages(deps Deps, view *views, cfg Config) *reviewPages {
	if deps.Review == nil || deps.Privacy == nil {
		return nil
	}
	return &reviewPages{guildGate: guildGate{view: view}, review: deps.Review, privacy: deps.Privacy, log: cfg.Logger,
		pageSize: cfg.PageSize}
}

// routes adds the review pages to mux; without the review queue there are none.
func (rp *reviewPages) routes(mux *http.ServeMux, a *signIn) {
	if rp == nil {
		return
	}
	mux.Handle("GET /servers/{guild}/review", a.signedIn(rp.serverQueue))
	mux.Handle("POST /servers/{guild}/review", a.signedIn(a.changes(rp.serverSettle)))
	mux.Handle("GET /me/review", a.signedIn(rp.personalQueue))
	mux.Handle("POST /me/review", a.signedIn(a.changes(rp.personalSettle)))
}

// reviewScanLimit bounds the items read to find one by its ref, as /memory review does.
const reviewScanLimit = 1000

// reviewRefPattern is an item's ref: "d" and a memory id, or "h" and a history id.
var reviewRefPattern = regexp.MustCompile(`^[dh][1-9][0-9]{0,17}$`)

// reviewChoiceOf reads a choice as the forms send it.
var reviewChoiceOf = map[string]memory.ReviewChoice{
	"keep": memory.ReviewKeep, "replace": memory.ReviewReplace, "merge": memory.ReviewMerge, "forget": memory.ReviewForget,
}

// reviewPlace is the queue a request is about: whose scope, under which audience, where its
// page and its memories live.
type reviewPlace struct {
	owner memory.Owner
	aud   *memory.Audience
	// base is the queue's page; memoryBase + id is a memory's page.
	base, memoryBase string
	// name is the place as the page's title says it.
	name string
	// tabs are a server's tabs; the personal queue has none.
	tabs serverTabs
}

// serverPlace is srv's server memory under the channels the member can view there.
func serverPlace(srv server) reviewPlace {
	return reviewPlace{owner: memory.ServerOwner(srv.GuildID), aud: channelAudience(srv), name: srv.Name,
		base: "/servers/" + srv.GuildID + "/review", memoryBase: "/servers/" + srv.GuildID + "/memories/"}
}

// personalPlace is the member's personal memory under every channel they can view.
func (rp *reviewPages) personalPlace(r *http.Request, v *visit) reviewPlace {
	return reviewPlace{owner: v.owner(), aud: v.audience(r), base: "/me/review", memoryBase: "/me/memories/",
		name: textFor(v, "web.review.personal")}
}

// serverQueue is a server's queue, for its editors only: others get the missing page, as
// /memory review refuses them.
func (rp *reviewPages) serverQueue(w http.ResponseWriter, r *http.Request, v *visit) {
	srv, ok := rp.open(w, r, v, needEditor)
	if !ok {
		return
	}
	place := serverPlace(srv)
	place.tabs = rp.tabs.tabs(srv, tabReview)
	rp.show(w, r, v, place)
}

// personalQueue is the member's own queue.
func (rp *reviewPages) personalQueue(w http.ResponseWriter, r *http.Request, v *visit) {
	rp.show(w, r, v, rp.personalPlace(r, v))
}

// show renders one page of place's queue, or the one item ?item= names.
func (rp *reviewPages) show(w http.ResponseWriter, r *http.Request, v *visit, place reviewPlace) {
	q := r.URL.Query()
	body := reviewBody{Base: place.base, Place: place.name, Note: rp.note(v, q), serverTabs: place.tabs}
	if ref := q.Get("item"); ref != "" {
		item, found, err := rp.find(r, place, ref)
		if err != nil {
			rp.view.internal(w, r, v, "couldn't read the review queue", err)
			return
		}
		if !found {
			rp.view.notFound(w, r, v)
			return
		}
		body.One, body.Total = true, 1
		body.Items = []reviewItemView{reviewItemOf(v, place, item)}
		rp.view.render(w, r, v, http.StatusOK, "review", "web.review.title", body, place.name)
		return
	}
	pageNo, _ := strconv.Atoi(q.Get("p"))
	pageNo = max(pageNo, 1)
	items, total, err := rp.review.Queue(r.Context(), place.owner, place.aud, rp.pageSize, (pageNo-1)*rp.pageSize)
	if err != nil {
		rp.view.internal(w, r, v, "couldn't read the review queue", err)
		return
	}
	body.Total = total
	for _, it := range items {
		body.Items = append(body.Items, reviewItemOf(v, place, it))
	}
	pages := max((total+rp.pageSize-1)/rp.pageSize, 1)
	if pageNo > 1 {
		body.PrevURL = place.base + "?p=" + strconv.Itoa(pageNo-1)
	}
	if pageNo < pages {
		body.NextURL = place.base + "?p=" + strconv.Itoa(pageNo+1)
	}
	rp.view.render(w, r, v, http.StatusOK, "review", "web.review.title", body, place.name)
}

// note is what the previous press did, from the query its redirect carries: a choice made,
// or an item no longer waiting. Only these fixed words are shown, never the query's text.
func (rp *reviewPages) note(v *visit, q url.Values) string {
	if q.Get("gone") != "" {
		return textFor(v, "ux.review.gone")
	}
	if c, ok := reviewChoiceOf[q.Get("done")]; ok {
		return textFor(v, "ux.review.done", textFor(v, "ux.review."+string(c)))
	}
	return ""
}

// find finds item ref in place's queue as the member may see it.
func (rp *reviewPages) find(r *http.Request, place reviewPlace, ref string) (memory.ReviewItem, bool, error) {
	if !reviewRefPattern.MatchString(ref) {
		return memory.ReviewItem{}, false, nil
	}
	items, _, err := rp.review.Queue(r.Context(), place.owner, place.aud, reviewScanLimit, 0)
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

// serverSettle settles an item of a server's queue: the member must still edit the
// server's memory (roles change) and see all the item shows.
func (rp *reviewPages) serverSettle(w http.ResponseWriter, r *http.Request, v *visit) {
	srv, ok := rp.open(w, r, v, needEditor)
	if !ok {
		return
	}
	rp.settle(w, r, v, serverPlace(srv))
}

// personalSettle settles an item of the member's own queue. At the full privacy level they
// may keep or forget, not write words in (the rule of manual writes).
func (rp *reviewPages) personalSettle(w http.ResponseWriter, r *http.Request, v *visit) {
	choice := reviewChoiceOf[r.PostForm.Get("choice")]
	if choice == memory.ReviewReplace || choice == memory.ReviewMerge {
		us, err := rp.privacy.UserSettings(r.Context(), v.sess.UserID)
		if err != nil {
			rp.view.internal(w, r, v, "couldn't read a member's privacy level", err)
			return
		}
		if us.Privacy == memory.PrivacyFull {
			rp.view.message(w, r, v, http.StatusForbidden, "web.review.privacy", "")
			return
		}
	}
	rp.settle(w, r, v, rp.personalPlace(r, v))
}

// settle resolves the form's item with its choice for the member, under place's audience,
// through the store's audited, versioned writes, and sends the browser back to the queue.
func (rp *reviewPages) settle(w http.ResponseWriter, r *http.Request, v *visit, place reviewPlace) {
	ref := r.PostForm.Get("ref")
	choice, ok := reviewChoiceOf[r.PostForm.Get("choice")]
	if !ok || !reviewRefPattern.MatchString(ref) {
		rp.view.notFound(w, r, v)
		return
	}
	text := ""
	if choice == memory.ReviewMerge {
		text = strings.TrimSpace(r.PostForm.Get("text"))
		if text == "" {
			rp.view.message(w, r, v, http.StatusBadRequest, "web.review.merge_empty", "")
			return
		}
	}
	changed, err := rp.review.Resolve(r.Context(), place.owner, ref, choice, text, v.actor(), place.aud)
	switch {
	case memory.ErrorCode(err) == memory.ENOTFOUND:
		// Settled meanwhile, never there, or not the member's to see: one answer for all.
		http.Redirect(w, r, place.base+"?gone=1", http.StatusSeeOther)
		return
	case memory.ErrorCode(err) == memory.EINVALID, memory.ErrorCode(err) == memory.ECONFLICT, errors.Is(err, memory.ErrChangedSince):
		rp.log.InfoContext(r.Context(), "review press refused by the store", "user_id", v.sess.UserID, "code", memory.ErrorCode(err))
		rp.view.message(w, r, v, http.StatusConflict, "web.error.refused", "")
		return
	case err != nil:
		rp.view.internal(w, r, v, "couldn't settle a review item", err)
		return
	}
	rp.log.InfoContext(r.Context(), "review item settled on the web dashboard", "user_id", v.sess.UserID, "scope", place.owner.Scope,
		"ref", ref, "choice", choice, "changed", len(changed))
	http.Redirect(w, r, place.base+"?done="+string(choice), http.StatusSeeOther)
}
