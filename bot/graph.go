package bot

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"
	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/graph"
)

// Graph is the knowledge graph, for the entities /memory show lists. *ltm.Graph satisfies
// it.
type Graph interface {
	MemoryEntities(ctx context.Context, owner memory.Owner, id int64) ([]graph.Node, error)
	MemoryMentionedWith(ctx context.Context, vis memory.Visible, id int64, aud *memory.Audience, limit int) ([]graph.CoMention, error)
}

// maxEmbedField is the longest value Discord accepts in an embed field.
const maxEmbedField = 1024

// showMentionedWith is how many co-mentioned entities /memory show lists: the strongest
// few say what the memory's entities go with; a long tail says nothing more.
const showMentionedWith = 8

// entitiesField lists by name the entities memory id of owner mentions, or returns nil
// when there are none or the store has no graph. The graph is read in the memory's own
// scope, which the caller was already allowed to see; a failure only leaves the field out.
func (b memoryBrowser) entitiesField(ctx context.Context, owner memory.Owner, id int64) *discordgo.MessageEmbedField {
	if b.store.Graph == nil {
		return nil
	}
	nodes, err := b.store.Graph.MemoryEntities(ctx, owner, id)
	if err != nil {
		b.log.Warn("couldn't read a memory's entities", slog.Int64(memory.LogMemoryID, id), slog.Any("err", err))
		return nil
	}
	if len(nodes) == 0 {
		return nil
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return &discordgo.MessageEmbedField{Name: "Mentions", Value: fieldList(names)}
}

// mentionedWithField lists the entities that other memories mention together with those
// memory id of owner mentions, as "Name (n)" by the number of such memories, or returns
// nil when there are none. Only memories aud allows are read, so no name and no count
// comes from a channel the member cannot view. A personal memory is the member's own, shown
// to them alone, so all of their personal scope counts, as /memory list shows it. A
// failure only leaves the field out.
func (b memoryBrowser) mentionedWithField(ctx context.Context, owner memory.Owner, id int64, aud *memory.Audience) *discordgo.MessageEmbedField {
	if b.store.Graph == nil {
		return nil
	}
	cs, err := b.store.Graph.MemoryMentionedWith(ctx, memory.Visible{Owner: owner}, id, aud, showMentionedWith)
	if err != nil {
		b.log.Warn("couldn't read the entities mentioned with a memory's", slog.Int64(memory.LogMemoryID, id), slog.Any("err", err))
		return nil
	}
	if len(cs) == 0 {
		return nil
	}
	items := make([]string, len(cs))
	for i, c := range cs {
		items[i] = c.Node.Name + " (" + strconv.Itoa(c.Count) + ")"
	}
	return &discordgo.MessageEmbedField{Name: "Mentioned with", Value: fieldList(items)}
}

// fieldList joins items with commas, ending with "…" where the next would not fit in an
// embed field.
func fieldList(items []string) string {
	var sb strings.Builder
	for i, item := range items {
		if i > 0 {
			item = ", " + item
		}
		if sb.Len()+len(item) > maxEmbedField-len(", …") {
			sb.WriteString(", …")
			break
		}
		sb.WriteString(item)
	}
	value := sb.String()
	for !utf8.ValidString(value) {
		value = value[:len(value)-1]
	}
	return value
}
