package memory

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
)

// Payer is who pays for a provider call: a server, or one member's DMs. The bot, the chat
// engine and the pipeline put the payer of their work in its context (WithPayer); the
// metered embedder that cmd/kioku gives the store reads it there to charge the call to that
// budget and pass it through that rate limit, and the store's embedding tracker puts each
// memory's own payer (PayerOf) in the context of the calls it makes for it.
type Payer struct {
	// GuildID is the server that pays; "" for a DM.
	GuildID string
	// ChannelID is the DM channel whose member pays, when GuildID is "".
	ChannelID string
	// UserID is the member who asked, when one did. It does not choose the budget of a
	// server; it keeps one member's cached query vectors apart from another's.
	UserID string
}

// Key names the budget the payer draws on, as the daily model budget keys it: "g:" and the
// guild (the server's scope key), "dm:" and the DM channel for a member's DMs, or, for a
// DM-origin memory that no longer says which DM channel it came from, "dm-user:" and the
// member. "" when the payer says nothing.
func (p Payer) Key() string {
	switch {
	case p.GuildID != "":
		return ServerOwner(p.GuildID).Key()
	case p.ChannelID != "":
		return "dm:" + p.ChannelID
	case p.UserID != "":
		return "dm-user:" + p.UserID
	}
	return ""
}

// PayerOf is who pays for embedding m: the server it belongs to or was made in, or, for a
// personal memory made in DMs, its member (through the DM channel it came from).
func PayerOf(m *Memory) Payer {
	if m.GuildID != "" {
		return Payer{GuildID: m.GuildID}
	}
	return Payer{ChannelID: m.Provenance.ChannelID, UserID: m.UserID}
}

// ErrSpendLimited is what a provider call refused for its payer's daily budget or rate
// limit wraps. It says nothing about the provider: callers fall back (recall on keywords,
// a memory left for the embedding tracker) without marking the provider down for everyone.
var ErrSpendLimited = errors.New("the model budget or rate limit of this server or member is spent")

type payerKey struct{}

// payerNote is the payer in a context, and whether a provider call made in it was refused.
type payerNote struct {
	payer   Payer
	limited atomic.Bool
}

// WithPayer returns ctx with p as the payer of the provider calls made in it, replacing any
// payer ctx had.
func WithPayer(ctx context.Context, p Payer) context.Context {
	return context.WithValue(ctx, payerKey{}, &payerNote{payer: p})
}

// EnsurePayer returns ctx when it has a payer, and ctx with p as its payer otherwise.
func EnsurePayer(ctx context.Context, p Payer) context.Context {
	if _, ok := PayerFrom(ctx); ok {
		return ctx
	}
	return WithPayer(ctx, p)
}

// PayerFrom returns the payer of ctx, if it has one.
func PayerFrom(ctx context.Context) (Payer, bool) {
	n, ok := ctx.Value(payerKey{}).(*payerNote)
	if !ok {
		return Payer{}, false
	}
	return n.payer, true
}

// NoteSpendLimited records in ctx's payer that a provider call was refused for its budget
// or rate limit, for SpendLimited to report. Without a payer it does nothing.
func NoteSpendLimited(ctx context.Context) {
	if n, ok := ctx.Value(payerKey{}).(*payerNote); ok {
		n.limited.Store(true)
	}
}

// SpendLimited reports whether a provider call made in ctx (since WithPayer) was refused for
// its payer's budget or rate limit: a search then answered from keywords alone, and says so.
func SpendLimited(ctx context.Context) bool {
	n, ok := ctx.Value(payerKey{}).(*payerNote)
	return ok && n.limited.Load()
}

// QueryCacheKey keys the vector of q's text in a store's cache of query vectors. Besides the
// model and the text it names whose memories the query searches and who asked (ctx's
// payer), so a cached vector only ever answers the same member's (or, without one, the
// same payer's) query on the same scopes: no one can learn from a fast answer what someone
// else searched for.
func QueryCacheKey(ctx context.Context, model string, q *SearchQuery) string {
	owners := make([]string, len(q.Owners))
	for i, o := range q.Owners {
		owners[i] = o.Key()
	}
	slices.Sort(owners)
	p, _ := PayerFrom(ctx)
	return strings.Join([]string{model, strings.Join(owners, ","), p.Key(), p.UserID, q.Text}, "\x00")
}

// PayerBatch is up to a batch's worth of items that one payer pays for.
type PayerBatch[T any] struct {
	Payer Payer
	Items []T
}

// BatchByPayer cuts items into batches of at most size items, each of one payer (payerOf),
// so that every provider call is charged to the one budget it is made for. Payers come in
// the order of their first item, and each payer's items keep their order.
func BatchByPayer[T any](items []T, size int, payerOf func(T) Payer) []PayerBatch[T] {
	var order []string
	groups := map[string]*PayerBatch[T]{}
	for _, it := range items {
		p := payerOf(it)
		g, ok := groups[p.Key()]
		if !ok {
			g = &PayerBatch[T]{Payer: p}
			groups[p.Key()] = g
			order = append(order, p.Key())
		}
		g.Items = append(g.Items, it)
	}
	var out []PayerBatch[T]
	for _, k := range order {
		g := groups[k]
		for start := 0; start < len(g.Items); start += size {
			out = append(out, PayerBatch[T]{Payer: g.Payer, Items: g.Items[start:min(start+size, len(g.Items))]})
		}
	}
	return out
}
