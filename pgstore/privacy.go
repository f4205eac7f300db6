package pgstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/kioku-bot/kioku/memory"
)

// usersPerQuery bounds the ids of one UsersSettings statement, as ltm does.
const usersPerQuery = 500

// UsersSettings returns the settings of every user in ids, in one read per 500 users;
// users who never changed a setting get the defaults. It has no cap on how many users it
// answers for, so a caller that must exclude users at the full privacy level can exclude
// every one of them, however many people spoke.
func (s *Settings) UsersSettings(ctx context.Context, ids []string) (map[string]memory.UserSettings, error) {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	out := make(map[string]memory.UserSettings, len(ids))
	for _, id := range ids {
		out[id] = memory.UserSettings{UserID: id, Privacy: memory.PrivacyNormal}
	}
	for lo := 0; lo < len(ids); lo += usersPerQuery {
		part := ids[lo:min(lo+usersPerQuery, len(ids))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		rows, err := s.db.read.QueryContext(ctx, `SELECT user_id, privacy, cross_server, updated_at FROM user_settings
			WHERE user_id IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("couldn't read user settings: %w", err)
		}
		for rows.Next() {
			var (
				us      memory.UserSettings
				cross   int
				updated int64
			)
			if err := rows.Scan(&us.UserID, &us.Privacy, &cross, &updated); err != nil {
				rows.Close()
				return nil, fmt.Errorf("couldn't read user settings: %w", err)
			}
			us.CrossServer, us.UpdatedAt = cross != 0, fromMillis(updated)
			out[us.UserID] = us
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("couldn't read user settings: %w", err)
		}
	}
	return out, nil
}
