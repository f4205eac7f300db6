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
// origin, and that nothing a member asked to forget (or deleted) stayed.
//
// The package holds only tests. By default two walks of 5,000 steps run side by side
// (seeds -seed and -seed+1); run others with
//
//	go test ./internal/isolation/ -seed=42 -isolation.steps=20000 -isolation.walks=2
//
// A failure names the seed, the step, what the step did and the offending token with its
// origin, and prints the command that replays that walk alone.
package isolation
