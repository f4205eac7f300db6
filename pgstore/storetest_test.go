package pgstore_test

import (
	"testing"

	"github.com/kioku-bot/kioku/ltm/storetest"
	"github.com/kioku-bot/kioku/pgstore/pgtest"
)

// TestPostgresStore runs the store contract on PostgreSQL, one fresh schema per case.
func TestPostgresStore(t *testing.T) {
	pgtest.URL(t) // one skip line for the whole suite without a database
	storetest.Run(t, func(t *testing.T) storetest.Stores {
		s := pgtest.Open(t)
		clock := storetest.NewClock(storetest.Epoch)
		s.Now = clock.Now
		return storetest.Stores{
			Memories: s.Memories, Recall: s.Recall, Jobs: s.Jobs, Transcripts: s.Transcripts, Settings: s.Settings,
			Confirmations: s.Confirmations, ForgetMe: s.Confirmations, Graph: s.Graph,
			Clock:         clock,
			RecoverWindow: s.RecoverWindow,
			ConfirmTTL:    s.ConfirmTTL,
		}
	})
}
