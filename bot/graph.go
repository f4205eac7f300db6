package bot

import (
	"context"
	"log/slog"
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
}

// maxEmbedField is the longest value Discord accepts in an embed field.
const maxEmbedField = 1024

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
	var sb strings.Builder
	for i, n := range nodes {
		name := n.Name
		if i > 0 {
			name = ", " + name
		}
		if sb.Len()+len(name) > maxEmbedField-len(", …") {
			sb.WriteString(", …")
			break
		}
		sb.WriteString(name)
	}
	value := sb.String()
	for !utf8.ValidString(value) {
		value = value[:len(value)-1]
	}
	return &discordgo.MessageEmbedField{Name: "Mentions", Value: value}
}
