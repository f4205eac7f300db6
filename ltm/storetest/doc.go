// Package storetest is the store contract: the behaviour every kioku store implementation
// must show, checked only through the methods consumers call, never through SQL. SQLite
// (package ltm) runs it in every `go test ./ltm/...`; a second store (PostgreSQL, SPEC
// "Beyond one machine") is done when it passes the same suite unchanged.
//
// # What it checks
//
//   - scope isolation: a server memory is never visible from another guild, a personal
//     memory never from another user; another scope's ids are ENOTFOUND for get, modify,
//     forget, recover and history, and absent from list, search and scope history;
//   - per-scope dedup, and the writer-visibility rule of RememberAs, ModifyAs and RecoverAs
//     (a duplicate the writer cannot see neither absorbs the write nor blocks it);
//   - near-duplicates (Similar, SimilarAs): a paraphrase finds the memory it repeats, a
//     near miss finds none, and a writer in a place finds only what they may see there;
//   - versions and if_version conflicts (ECONFLICT);
//   - soft delete and recover within the recover window, EEXPIRED after it;
//   - history rows for every mutation, with actor, reason, version and the store's time;
//   - undo of the last change (an edit restored, a forget recovered, a creation forgotten),
//     recorded as a change of its own, refused once the memory moved past the version named,
//     and ENOTFOUND from another scope;
//   - importance decay: importance_min filters on the importance decayed to the store's
//     clock, pinned memories and decisions do not decay, the stored base never changes;
//   - forget-by-query: the token forgets exactly the preview, once, in its scope, before
//     it expires;
//   - forget-me: counted preview, a token bound to the member and used once, nothing of
//     the member left to any read (and, for a file-backed store, in the bytes of its
//     files), everyone else intact;
//   - the job queue: dedup by kind and key, exclusive leases, heartbeat, postpone without
//     an attempt, fail with backoff until dead, reaping of stale leases, requeue;
//   - the operator's job queries: by state, by the guild a payload names (never a DM's job),
//     by age, and a purge that deletes only finished jobs;
//   - transcripts: append, recent, after a cursor, deletion and edits of messages;
//   - settings: defaults, round trips, privacy levels and what a stricter one takes back;
//   - the knowledge graph (when Stores.Graph is set): a memory linked to the entities it
//     names in its own scope only, nothing of one scope's graph read from another,
//     forget-me removing the member's person entity (by user id), their links, their
//     personal graph and the relations learned only from them, and entities nothing
//     mentions any more collected while those still mentioned stay;
//   - the pipeline's writes (when Stores.Facts is set): each kind of proposal ends as the
//     rules say, a batch whose lease was lost or whose cursor moved writes nothing, the
//     batch that applies moves the cursor and completes its job together, evidence links
//     the messages a fact came from, contradictions go to review, a proposal about a
//     member forgotten after the job started writes nothing, and her forget-me leaves
//     nothing the pipeline wrote about her (nor, for a file-backed store, its bytes);
//   - channel records, departed and welcomed servers and the daily model budget (when
//     Stores.Channels, Guilds and Budgets are set): channel rules kept past a delete, a
//     departure cancelled only by a re-add before it is due, a purge that leaves nothing
//     of the server to any read and nothing of another server touched, a welcome claimed
//     once, model calls counted per key and day within a limit;
//   - the web dashboard's sign-ins and sessions (when Stores.Sessions is set): a sign-in
//     taken once, by the browser that started it, before it expires; a session read back
//     until it expires or is revoked, one member's revoked without touching another's,
//     and forget-me signing the member out everywhere (with nothing of her session left in
//     a file-backed store's bytes).
//
// Behaviours that belong to one
// engine stay with its own tests: for SQLite, ltm's TestForgetMeCompleteness (full-text
// vocabularies, pipeline batches, the query cache), recall ranking, embeddings, retention,
// import and export, migrations.
//
// # Running it for a new store
//
// Write one test in the new store's package that calls Run with a constructor. The
// constructor opens a fresh, empty store for each call (a new database or schema; the suite
// opens one per case), registers its closing with t.Cleanup, makes every clock the store
// reads come from one Clock the suite can move, and returns the store's aggregates:
//
//	func TestPostgresStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Stores {
//			db := postgres.MustOpenFresh(t) // an empty schema, dropped by t.Cleanup
//			clock := storetest.NewClock(storetest.Epoch)
//			db.Now = clock.Now
//			return storetest.Stores{
//				Memories: db.Memories, Duplicates: db.Duplicates, Recall: db.Recall, Jobs: db.Jobs,
//				Transcripts: db.Transcripts, Settings: db.Settings,
//				Confirmations: db.Confirmations, ForgetMe: db.ForgetMe, Graph: db.Graph,
//				Clock: clock, RecoverWindow: db.RecoverWindow, ConfirmTTL: db.ConfirmTTL,
//			}
//		})
//	}
//
// All aggregates must share one database, because behaviours cross them (forget-me reaches
// transcripts and jobs, a privacy switch reaches jobs). Start the Clock on whole seconds
// (Epoch does) so stored times compare equal whatever precision the engine keeps. Set Raw
// only for a store whose data lives in files it owns; a database server leaves it nil.
// sqlite_test.go in this directory is the reference constructor.
//
// The interfaces name the domain's types, which live in memory (memory.Change,
// memory.WriteContext, memory.ForgetMeSummary and the like); ltm is named only for the
// service itself (its Store, RepairOptions) and the notes and history reasons it writes.
package storetest
