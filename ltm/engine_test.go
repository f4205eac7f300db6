package ltm_test

import (
	"github.com/kioku-bot/kioku/ltm"
	"github.com/kioku-bot/kioku/ltm/sqlite"
)

// The internal tests run on SQLite, the default engine (export_test.go).
func init() { ltm.OpenTestStore = sqlite.Open }
