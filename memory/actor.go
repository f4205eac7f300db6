package memory

import "strings"

// Actor names who caused a change, as recorded in history: "user:<id>", "model:<user id>",
// "pipeline", "cli", "retention", "discord" or "forgotten member".
type Actor string

// UserActor names a change a member made themselves (a command, an import).
func UserActor(userID string) Actor { return Actor("user:" + userID) }

// ModelActor names a change the chat model made on behalf of the user it was talking to.
func ModelActor(userID string) Actor { return Actor("model:" + userID) }

// UserID returns the member of a UserActor, "" for any other actor.
func (a Actor) UserID() string {
	id, _ := strings.CutPrefix(string(a), "user:")
	if id == string(a) {
		return ""
	}
	return id
}

// ModelUserID returns the member a ModelActor acted for, "" for any other actor.
func (a Actor) ModelUserID() string {
	id, _ := strings.CutPrefix(string(a), "model:")
	if id == string(a) {
		return ""
	}
	return id
}

// Fixed actors.
const (
	ActorPipeline  Actor = "pipeline"
	ActorCLI       Actor = "cli"
	ActorRetention Actor = "retention"
	// ActorDiscord is the history actor of a change Discord reported, such as a deleted
	// message; who deleted it (its author or a moderator) is not told to bots.
	ActorDiscord Actor = "discord"
	// ActorForgotten replaces a forgotten member's id as the actor of history rows that stay
	// (their edits of server memory): the change is still on record, the person is not.
	ActorForgotten Actor = "forgotten member"
)
