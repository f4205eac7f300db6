package web

import (
	"strconv"
	"strings"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/memory"
)

// reviewBody is the review page's: the items shown, where the queue lives, and what the
// previous press did.
type reviewBody struct {
	// serverTabs are a server queue's tabs; the personal queue has none.
	serverTabs
	// Base is the queue's page, where its forms post; Place names whose queue it is.
	Base, Place string
	Note        string
	Items       []reviewItemView
	Total       int
	// One is set when the page shows a single item (?item=).
	One              bool
	PrevURL, NextURL string
}

// reviewItemView is one item as the page shows it, in the words of /memory review.
type reviewItemView struct {
	Ref, Kind string
	// Link is the item's own page.
	Link     string
	Memories []reviewMemoryView
	// Proposed is a proposal's new text; ProposedForget says a proposal is to forget.
	Proposed, ProposedForget string
	Reason, Hint             string
	// Pair is set when Replace and Merge apply (a pair, or a proposal).
	Pair bool
	// MergeText is the merge form's starting text; MergeLabel names its target.
	MergeText, MergeLabel string
}

// reviewMemoryView is one memory of an item.
type reviewMemoryView struct {
	ID                        int64
	Link                      string
	Type, State, Created, ISO string
	Content                   string
}

// textFor is the text of key in the visit's language.
func textFor(v *visit, key string, args ...any) string {
	return i18n.T(v.lang, i18n.Key(key), args...)
}

// plainText drops the Discord markdown of the bot's wording (bold), which a page shows as
// it is.
func plainText(s string) string { return strings.ReplaceAll(s, "**", "") }

// reviewItemOf is item as place's page shows it. Queue listed it only because the member
// may see all it shows.
func reviewItemOf(v *visit, place reviewPlace, item memory.ReviewItem) reviewItemView {
	kind := "ux.review.kind." + string(item.Kind)
	if item.Kind == memory.ReviewDisputed && item.Other == nil {
		kind = "ux.review.kind.disputed.alone"
	}
	out := reviewItemView{Ref: item.Ref, Kind: plainText(textFor(v, kind)), Link: place.base + "?item=" + item.Ref,
		Reason: item.Reason, Pair: item.Other != nil || item.Kind == memory.ReviewProposal}
	for _, m := range []*memory.Memory{item.Memory, item.Other} {
		if m != nil {
			out.Memories = append(out.Memories, reviewMemoryOf(v, place, m))
		}
	}
	if item.Kind == memory.ReviewProposal {
		if item.Proposed == "" {
			out.ProposedForget = textFor(v, "ux.review.proposed.forget", item.Memory.ID)
		} else {
			out.Proposed = item.Proposed
		}
	}
	switch {
	case item.Other != nil:
		out.Hint = textFor(v, "ux.review.hint.pair", item.Memory.ID, item.Other.ID)
	case item.Kind == memory.ReviewProposal:
		out.Hint = textFor(v, "ux.review.hint.proposal", item.Memory.ID)
	default:
		out.Hint = textFor(v, "ux.review.hint.alone", item.Memory.ID)
	}
	out.MergeText = item.Memory.Content
	if item.Proposed != "" {
		out.MergeText = item.Proposed
	}
	out.MergeLabel = textFor(v, "ux.review.merge.title", item.Memory.ID)
	return out
}

// reviewMemoryOf is one memory of an item, linked to its page.
func reviewMemoryOf(v *visit, place reviewPlace, m *memory.Memory) reviewMemoryView {
	state := string(m.State)
	if m.State == memory.StateActive {
		state = "active" // the stored state of an active memory is empty
	}
	return reviewMemoryView{ID: m.ID, Link: place.memoryBase + strconv.FormatInt(m.ID, 10),
		Type: textFor(v, "choice.type."+string(m.Type)), State: textFor(v, "choice.lifecycle."+state),
		Created: m.CreatedAt.UTC().Format("2006-01-02"), ISO: m.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), Content: m.Content}
}
