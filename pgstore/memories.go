package pgstore

import (
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// The memories aggregate is the service's (ltm.Memories, Store.Memories). What is left here
// are the row columns and scans that this package's recall still reads memories with
// (recall.go, neighbours.go, embedtrack.go) and its upkeep's reindexing (upkeep.go); they
// go when those fold into ltm.

// memoryColumns is the column list scanMemory expects, in order.
const memoryColumns = `id, scope, guild_id, user_id, type, content, normalized, content_hash, confidence,
	importance, pinned, tags, source, author_id, author_name, channel_id, message_id, created_at,
	updated_at, accessed_at, access_count, version, deleted_at, subject_id`

func scanMemory(row scanner) (*memory.Memory, error) {
	var (
		m                          memory.Memory
		tags                       string
		created, updated, accessed int64
		deleted                    sql.NullInt64
		pinned                     int
	)
	err := row.Scan(&m.ID, &m.Scope, &m.GuildID, &m.UserID, &m.Type, &m.Content, &m.Normalized, &m.Hash,
		&m.Confidence, &m.Importance, &pinned, &tags, &m.Source, &m.Provenance.AuthorID, &m.Provenance.Author,
		&m.Provenance.ChannelID, &m.Provenance.MessageID, &created, &updated, &accessed, &m.AccessCount,
		&m.Version, &deleted, &m.SubjectID)
	if err != nil {
		return nil, err
	}
	m.Pinned = pinned != 0
	if tags != "" && tags != "[]" {
		if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
			return nil, fmt.Errorf("couldn't decode tags of memory %d: %w", m.ID, err)
		}
	}
	m.CreatedAt, m.UpdatedAt, m.AccessedAt = fromMillis(created), fromMillis(updated), fromMillis(accessed)
	if deleted.Valid {
		m.DeletedAt = fromMillis(deleted.Int64)
	}
	return &m, nil
}

func collectMemories(rows *sql.Rows) ([]*memory.Memory, error) {
	defer rows.Close()
	var out []*memory.Memory
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("couldn't read memory row: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read memory rows: %w", err)
	}
	return out, nil
}
