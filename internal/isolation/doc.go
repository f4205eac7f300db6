// Package isolation holds kioku's isolation property test (SPEC §2, the Trust issue's
// proof): a seeded random walk through three Discord servers, each with a public channel,
// a role-gated private channel and a public thread, five members with different roles in
// each server, and their DMs. Members talk in channels and DMs, change their privacy
// level, ask to be forgotten, delete messages, look at their memories, and the background
// pipeline runs; every model answer comes from an adversarial fake that picks wrong
// scopes, forges subjects and names ids from other scopes, guilds, channels and deleted
// memories, but only ever repeats words it was shown.
//
// Every message carries one fresh token, so the test knows who said each word and where.
// After every step an oracle, which computes who can read what from its own table of
// roles and channels rather than from kioku's code, checks that nothing reached a prompt,
// reply, notice, tool result or view that someone reading it could not have read at its
// origin, and that nothing a member asked to forget (or deleted) stayed. The views include
// /memory history of any id a member names (each row's text only where its origin may be
// read) and /kioku status (counts of what the member may read, exactly while the server is
// up, never more in an outage).
//
// The walk also goes through the states the bot can be in: a second process on the same
// store, whose gateway holds none of the servers (another shard's), decides half of the
// pipeline's jobs from the roles and channels the store keeps, and one server's roles never
// reached the store, so that process must not widen any audience; servers go unavailable
// (a Discord outage) and then missing from the gateway (the window after a restart) and
// come back. Unknown means not visible, in every one of them.
//
// The same walks run on SQLite (TestIsolation) and on PostgreSQL (TestIsolationPostgres,
// with KIOKU_TEST_POSTGRES; shorter, -isolation.pgsteps). The package holds only tests. By
// default two walks of 5,000 steps run side by side (seeds -seed and -seed+1); run others
// with
//
//	go test ./internal/isolation/ -seed=42 -isolation.steps=20000 -isolation.walks=2
//
// A failure names the seed, the step, what the step did and the offending token with its
// origin, and prints the command that replays that walk alone.
package isolation
