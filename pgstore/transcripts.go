package pgstore

import (
	"context"
	"fmt"
)

// extractionCursor returns the id of the last transcript turn of a channel that extraction
// has read, 0 when it never ran there, as ltm's Transcripts.ExtractionCursor; the
// pipeline's batch writes (facts.go) read it inside their transaction. It goes when they
// fold into the service.
func extractionCursor(ctx context.Context, q querier, guildID, channelID string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT last_turn_id FROM pipeline_cursors WHERE guild_id = ? AND channel_id = ?`,
		guildID, channelID).Scan(&id)
	if errNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("couldn't read extraction cursor of channel %s: %w", channelID, err)
	}
	return id, nil
}
