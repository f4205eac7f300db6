package sqlite_test

import (
	"context"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestOnboardingUpgrade: 0013 counts every server an existing database knows (settings,
// channels, memories, transcripts) as already welcomed, so an upgrade greets none of the
// servers the bot has been in for months, and gives existing settings the auto language.
func TestOnboardingUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0013")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO guild_settings (guild_id, updated_at) VALUES ('1', 1)`,
		`INSERT INTO guild_channels (guild_id, channel_id, updated_at) VALUES ('2', '20', 1)`,
		`INSERT INTO memories (id, scope, scope_key, guild_id, type, content, normalized, content_hash, source, created_at, updated_at)
			VALUES (1, 'server', 'g:3', '3', 'fact', 'x', 'x', 'h', 'command', 1, 1)`,
		`INSERT INTO transcripts (guild_id, channel_id, user_id, role, content, created_at) VALUES ('4', '40', '7', 'user', 'hi', 1)`,
		`INSERT INTO transcripts (guild_id, channel_id, user_id, role, content, created_at) VALUES ('', '50', '7', 'user', 'dm', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT guild_id FROM guild_onboarding ORDER BY guild_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	if len(got) != 4 || got[0] != "1" || got[3] != "4" {
		t.Errorf("welcomed servers after the upgrade = %v, want 1 2 3 4", got)
	}
	var lang string
	if err := db.QueryRow(`SELECT language FROM guild_settings WHERE guild_id = '1'`).Scan(&lang); err != nil || lang != "auto" {
		t.Errorf("language of existing settings = %q (%v), want auto", lang, err)
	}
	if _, err := db.Exec(`UPDATE guild_settings SET language = 'fr'`); err == nil {
		t.Error("an unknown language was stored")
	}
}
