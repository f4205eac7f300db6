package postgres_test

import (
	"testing"

	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
)

// TestMain says, after the tests, how many skipped for want of a PostgreSQL database.
func TestMain(m *testing.M) { pgtest.Main(m) }
