package ltm

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kioku-bot/kioku/memory"
)

// SaveGuildChannels records the channels as they are now: live (a channel seen again
// after a delete is live again), or deleted when DeletedAt is set. Overwrites are stored as
// given; nil stores none.
func (s *Channels) SaveGuildChannels(ctx context.Context, chans []memory.GuildChannel) error {
	if len(chans) == 0 {
		return nil
	}
	now := s.db.nowMillis()
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO guild_channels
			(guild_id, channel_id, parent_id, kind, private_thread, overwrites, deleted_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (guild_id, channel_id) DO UPDATE SET parent_id = excluded.parent_id, kind = excluded.kind,
				private_thread = excluded.private_thread, overwrites = excluded.overwrites, deleted_at = excluded.deleted_at,
				updated_at = excluded.updated_at`)
		if err != nil {
			return fmt.Errorf("couldn't save guild channels: %w", err)
		}
		defer stmt.Close()
		for _, c := range chans {
			if c.GuildID == "" || c.ChannelID == "" {
				return fmt.Errorf("couldn't save guild channel %q of guild %q: both ids are required", c.ChannelID, c.GuildID)
			}
			ows := c.Overwrites
			if ows == nil {
				ows = []memory.Overwrite{}
			}
			raw, err := json.Marshal(ows)
			if err != nil {
				return fmt.Errorf("couldn't encode overwrites of channel %s: %w", c.ChannelID, err)
			}
			var deleted any
			if !c.DeletedAt.IsZero() {
				deleted = millis(c.DeletedAt)
			}
			if _, err := stmt.ExecContext(ctx, c.GuildID, c.ChannelID, c.ParentID, c.Kind, boolInt(c.PrivateThread), string(raw),
				deleted, now); err != nil {
				return fmt.Errorf("couldn't save guild channel %s: %w", c.ChannelID, err)
			}
		}
		return nil
	})
}

// MarkChannelDeleted records that a channel was deleted. Its last known rule stays, so its
// memories remain limited to the people who could see it. A channel never recorded stays
// unknown, which keeps its memories out of every other channel.
func (s *Channels) MarkChannelDeleted(ctx context.Context, guildID, channelID string) error {
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE guild_channels SET deleted_at = ?, updated_at = ?
			WHERE guild_id = ? AND channel_id = ? AND deleted_at IS NULL`, s.db.nowMillis(), s.db.nowMillis(), guildID, channelID)
		if err != nil {
			return fmt.Errorf("couldn't mark channel %s deleted: %w", channelID, err)
		}
		return nil
	})
}

// GuildChannels returns every recorded channel of a guild, deleted ones included.
func (s *Channels) GuildChannels(ctx context.Context, guildID string) ([]memory.GuildChannel, error) {
	rows, err := s.db.read.QueryContext(ctx, `SELECT guild_id, channel_id, parent_id, kind, private_thread, overwrites,
		deleted_at, updated_at FROM guild_channels WHERE guild_id = ? ORDER BY channel_id`, guildID)
	if err != nil {
		return nil, fmt.Errorf("couldn't read channels of guild %s: %w", guildID, err)
	}
	defer rows.Close()
	var out []memory.GuildChannel
	for rows.Next() {
		var (
			c         memory.GuildChannel
			private   int
			raw       string
			deleted   sql.NullInt64
			updatedAt int64
		)
		if err := rows.Scan(&c.GuildID, &c.ChannelID, &c.ParentID, &c.Kind, &private, &raw, &deleted, &updatedAt); err != nil {
			return nil, fmt.Errorf("couldn't read a channel of guild %s: %w", guildID, err)
		}
		if err := json.Unmarshal([]byte(raw), &c.Overwrites); err != nil {
			return nil, fmt.Errorf("couldn't decode overwrites of channel %s: %w", c.ChannelID, err)
		}
		c.PrivateThread = private != 0
		if deleted.Valid {
			c.DeletedAt = fromMillis(deleted.Int64)
		}
		c.UpdatedAt = fromMillis(updatedAt)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read channels of guild %s: %w", guildID, err)
	}
	return out, nil
}

// Lookup returns memory id of owner's scope whether or not it was forgotten, for checks
// made before acting on it (whether a /memory view may show it where it is asked for).
func (s *Channels) Lookup(ctx context.Context, owner memory.Owner, id int64) (*memory.Memory, error) {
	if err := owner.Validate(); err != nil {
		return nil, err
	}
	return findMemory(ctx, s.db.read, owner, id, true)
}

// SaveGuildRoles records a guild's roles and owner as they are now, replacing what was
// stored. Roles without the @everyone role are refused: they would say the roles are known
// when they are not.
func (s *Channels) SaveGuildRoles(ctx context.Context, r memory.GuildRoles) error {
	raw, err := EncodeGuildRoles(r)
	if err != nil {
		return err
	}
	now := s.db.nowMillis()
	return s.db.withWriteTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO guild_roles (guild_id, owner_id, roles, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (guild_id) DO UPDATE SET owner_id = excluded.owner_id, roles = excluded.roles,
				updated_at = excluded.updated_at`, r.GuildID, r.OwnerID, raw, now); err != nil {
			return fmt.Errorf("couldn't save the roles of guild %s: %w", r.GuildID, err)
		}
		return nil
	})
}

// GuildRoles returns a guild's stored roles and owner; ok is false when none are stored.
func (s *Channels) GuildRoles(ctx context.Context, guildID string) (r memory.GuildRoles, ok bool, err error) {
	var raw string
	var updatedAt int64
	err = s.db.read.QueryRowContext(ctx, `SELECT owner_id, roles, updated_at FROM guild_roles WHERE guild_id = ?`,
		guildID).Scan(&r.OwnerID, &raw, &updatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return memory.GuildRoles{}, false, nil
	}
	if err != nil {
		return memory.GuildRoles{}, false, fmt.Errorf("couldn't read the roles of guild %s: %w", guildID, err)
	}
	r.GuildID, r.UpdatedAt = guildID, fromMillis(updatedAt)
	if err := DecodeGuildRoles(raw, &r); err != nil {
		return memory.GuildRoles{}, false, err
	}
	return r, true, nil
}

// EncodeGuildRoles checks a guild's roles for saving and encodes them as stored (shared
// with the PostgreSQL store).
func EncodeGuildRoles(r memory.GuildRoles) (string, error) {
	if r.GuildID == "" {
		return "", errors.New("couldn't save guild roles: the guild id is required")
	}
	if _, ok := r.Roles[r.GuildID]; !ok {
		return "", fmt.Errorf("couldn't save the roles of guild %s: the @everyone role is missing", r.GuildID)
	}
	raw, err := json.Marshal(r.Roles)
	if err != nil {
		return "", fmt.Errorf("couldn't encode the roles of guild %s: %w", r.GuildID, err)
	}
	return string(raw), nil
}

// DecodeGuildRoles reads stored roles into r (shared with the PostgreSQL store).
func DecodeGuildRoles(raw string, r *memory.GuildRoles) error {
	if err := json.Unmarshal([]byte(raw), &r.Roles); err != nil {
		return fmt.Errorf("couldn't decode the roles of guild %s: %w", r.GuildID, err)
	}
	if r.Roles == nil {
		r.Roles = map[string]int64{}
	}
	return nil
}
