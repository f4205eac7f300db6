package sqlite_test

import (
	"context"
	"testing"

	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// TestGuildRolesUpgrade: 0020 adds the stored roles beside a database's stored channels,
// which it keeps as they were. No guild of an upgraded database has roles until its next
// GUILD_CREATE writes them, so until then its memories stay in their own channels.
func TestGuildRolesUpgrade(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := sqlite.Migrate(ctx, db, migrationsBefore(t, "0020")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO guild_channels (guild_id, channel_id, overwrites, updated_at)
		VALUES ('1', '10', '[{"id":"1","type":0,"allow":0,"deny":1024}]', 5)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`SELECT count(*) FROM guild_roles`); err == nil {
		t.Fatal("guild_roles exists before 0020")
	}
	if _, err := sqlite.Migrate(ctx, db, sqlite.Migrations()); err != nil {
		t.Fatal(err)
	}
	var overwrites string
	if err := db.QueryRow(`SELECT overwrites FROM guild_channels WHERE guild_id = '1' AND channel_id = '10'`).Scan(&overwrites); err != nil ||
		overwrites != `[{"id":"1","type":0,"allow":0,"deny":1024}]` {
		t.Errorf("stored channel after the upgrade: %q %v", overwrites, err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM guild_roles`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("roles after the upgrade: %d %v, want none", n, err)
	}
	if _, err := db.Exec(`INSERT INTO guild_roles (guild_id, roles, updated_at) VALUES ('1', '{"1":1024}', 6)`); err != nil {
		t.Fatal(err)
	}
	var owner, roles string
	if err := db.QueryRow(`SELECT owner_id, roles FROM guild_roles WHERE guild_id = '1'`).Scan(&owner, &roles); err != nil ||
		owner != "" || roles != `{"1":1024}` {
		t.Errorf("stored roles: owner %q roles %q %v", owner, roles, err)
	}
	if _, err := db.Exec(`INSERT INTO guild_roles (guild_id, roles, updated_at) VALUES ('1', '{}', 7)`); err == nil {
		t.Error("a guild has two rows of roles")
	}
}
