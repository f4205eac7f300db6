// Package memory is kioku's domain root: what a memory is, who it belongs to, how its
// content is normalized and hashed, and the errors every edge shows to people.
//
// It performs no I/O and imports nothing else of kioku, so every other package can depend
// on it without cycles.
package memory

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxContentRunes is the longest memory content accepted, in characters. Discord messages
// are at most 2000 characters, so a memory always fits in one message.
const MaxContentRunes = 2000

// Scope says whose memory a row is.
type Scope string

// The two long-term scopes of SPEC §2.
const (
	// ScopeServer is shared by everyone in one guild and visible only there.
	ScopeServer Scope = "server"
	// ScopePersonal belongs to one user; it is visible to that user in DMs and, in a guild,
	// only when that user takes part and the memory originated there or they opted in.
	ScopePersonal Scope = "personal"
)

// Valid reports whether s is one of the known scopes.
func (s Scope) Valid() bool { return s == ScopeServer || s == ScopePersonal }

// Type classifies what a memory records.
type Type string

// Memory types of SPEC §2.
const (
	TypeFact       Type = "fact"
	TypePreference Type = "preference"
	TypeDecision   Type = "decision"
	TypeProcedural Type = "procedural"
	TypeSemantic   Type = "semantic"
	TypeEvent      Type = "event"
)

// Types lists every memory type in a stable order (for command choices and docs).
var Types = []Type{TypeFact, TypePreference, TypeDecision, TypeProcedural, TypeSemantic, TypeEvent}

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return slices.Contains(Types, t) }

// Source records which path wrote a memory.
type Source string

// Sources of SPEC §2.
const (
	SourceTool     Source = "tool"
	SourceCommand  Source = "command"
	SourcePipeline Source = "pipeline"
	SourceImport   Source = "import"
)

// Valid reports whether s is a known source.
func (s Source) Valid() bool {
	switch s {
	case SourceTool, SourceCommand, SourcePipeline, SourceImport:
		return true
	}
	return false
}

// Privacy is a user's global privacy level.
type Privacy string

// Privacy levels of SPEC §2.
const (
	// PrivacyNormal is the default: personal memories are used and may be written by the model.
	PrivacyNormal Privacy = "normal"
	// PrivacyPartial keeps personal memories out of prompts and away from the model's tools;
	// the user can still manage them by command.
	PrivacyPartial Privacy = "partial"
	// PrivacyFull makes the bot ignore the user entirely: no replies, no capture, no manual
	// add/edit. Forget and export still work so the user can leave.
	PrivacyFull Privacy = "full"
)

// Valid reports whether p is a known privacy level.
func (p Privacy) Valid() bool {
	return p == PrivacyNormal || p == PrivacyPartial || p == PrivacyFull
}

// Owner names one memory scope: a guild's server memory or one user's personal memory.
// Every store operation takes an Owner and puts it in its WHERE clause, so a caller can only
// ever touch rows of the scope it names.
type Owner struct {
	Scope Scope
	// GuildID keys server memory. For personal memory it is ignored when matching rows.
	GuildID string
	// UserID keys personal memory. Empty for server memory.
	UserID string
}

// ServerOwner returns the owner of a guild's server memory.
func ServerOwner(guildID string) Owner { return Owner{Scope: ScopeServer, GuildID: guildID} }

// PersonalOwner returns the owner of a user's personal memory.
func PersonalOwner(userID string) Owner { return Owner{Scope: ScopePersonal, UserID: userID} }

// Key is the compact scope key stored on every row ("g:<guild>" or "u:<user>"). Dedup is
// unique per key, which is what makes the same fact in two guilds two rows.
func (o Owner) Key() string {
	if o.Scope == ScopePersonal {
		return "u:" + o.UserID
	}
	return "g:" + o.GuildID
}

// Validate reports whether the owner names exactly one scope.
func (o Owner) Validate() error {
	switch o.Scope {
	case ScopeServer:
		if o.GuildID == "" {
			return Errorf(EINVALID, "Server memory needs a server; in DMs only personal memory exists.")
		}
	case ScopePersonal:
		if o.UserID == "" {
			return Errorf(EINVALID, "Personal memory needs a user.")
		}
	default:
		return Errorf(EINVALID, "Unknown scope %q: use server or personal.", string(o.Scope))
	}
	return nil
}

func (o Owner) String() string { return o.Key() }

// Provenance records where a memory came from.
type Provenance struct {
	AuthorID  string `json:"author_id,omitempty"`
	Author    string `json:"author,omitempty"` // display name at the time, for imports and evals
	ChannelID string `json:"channel_id,omitempty"`
	MessageID string `json:"message_id,omitempty"`
}

// Memory is one long-term memory row.
type Memory struct {
	ID    int64 `json:"id"`
	Scope Scope `json:"scope"`
	// GuildID is the guild of a server memory, or the guild a personal memory originated in
	// ("" for a DM). The origin decides whether a personal memory may be used in a guild.
	GuildID    string     `json:"guild_id,omitempty"`
	UserID     string     `json:"user_id,omitempty"`
	Type       Type       `json:"type"`
	Content    string     `json:"content"`
	Normalized string     `json:"-"`
	Hash       string     `json:"hash"`
	Confidence float64    `json:"confidence"`
	Importance float64    `json:"importance"`
	Pinned     bool       `json:"pinned,omitempty"`
	Tags       []string   `json:"tags,omitempty"`
	Source     Source     `json:"source"`
	Provenance Provenance `json:"provenance"`
	// SubjectID is the member the memory is about, when that is someone other than its
	// scope's owner or needs saying (a server fact about one member, a Remember-this copy
	// of another member's message). Forget-me removes every memory whose subject is the
	// member; names never decide this, user ids do.
	SubjectID string    `json:"subject_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// RefersTo and RefersToEnd are the span of time [RefersTo, RefersToEnd) the memory's own
	// words name ("the raid moved to next Friday", "先週の土曜日"), resolved against when it
	// was said (CreatedAt); both zero when they name no date or only an ambiguous one. The
	// store derives them from Content and CreatedAt on every write that sets the content,
	// so a caller never sets them.
	RefersTo    time.Time `json:"refers_to,omitzero"`
	RefersToEnd time.Time `json:"refers_to_end,omitzero"`
	UpdatedAt   time.Time `json:"updated_at"`
	AccessedAt  time.Time `json:"last_accessed_at,omitzero"`
	AccessCount int       `json:"access_count,omitempty"`
	Version     int       `json:"version"`
	DeletedAt   time.Time `json:"deleted_at,omitzero"`
	// State is the lifecycle state people or the pipeline gave the memory; "" leaves it
	// active (or past, which is derived from RefersToEnd).
	State State `json:"state,omitempty"`
	// StateRef is the memory the state names: the one that superseded this one, or the one
	// it disputes. 0 when the state names none. Show it only to someone who may see it.
	StateRef int64 `json:"state_ref,omitempty"`
}

// Owner returns the scope the memory belongs to.
func (m *Memory) Owner() Owner {
	if m.Scope == ScopePersonal {
		return Owner{Scope: ScopePersonal, UserID: m.UserID, GuildID: m.GuildID}
	}
	return Owner{Scope: m.Scope, GuildID: m.GuildID}
}

// Deleted reports whether the memory is a tombstone.
func (m *Memory) Deleted() bool { return !m.DeletedAt.IsZero() }

// Lifecycle is where a live memory stands: active; past once the span of time its words
// name has ended (a plan that happened, a deadline gone by); or the state it was given
// (superseded by a newer memory, disputed by another, archived).
type Lifecycle string

const (
	LifecycleActive     Lifecycle = "active"
	LifecyclePast       Lifecycle = "past"
	LifecycleSuperseded Lifecycle = Lifecycle(StateSuperseded)
	LifecycleDisputed   Lifecycle = Lifecycle(StateDisputed)
	LifecycleArchived   Lifecycle = Lifecycle(StateArchived)
)

// Lifecycles lists every lifecycle in a stable order (for command choices and docs).
var Lifecycles = []Lifecycle{LifecycleActive, LifecyclePast, LifecycleSuperseded, LifecycleDisputed, LifecycleArchived}

// Valid reports whether l is a known lifecycle.
func (l Lifecycle) Valid() bool { return slices.Contains(Lifecycles, l) }

// LifecycleAt is m's lifecycle at now: its stored state when it has one, else past or
// active by the span its words name.
func (m *Memory) LifecycleAt(now time.Time) Lifecycle {
	if m.State != StateActive {
		return Lifecycle(m.State)
	}
	if m.TimingAt(now) == TimingPast {
		return LifecyclePast
	}
	return LifecycleActive
}

// State is a lifecycle state that is stored, because no clock can derive it: a person or
// the pipeline decided it. The zero value is active.
type State string

const (
	StateActive State = ""
	// StateSuperseded: a newer memory (StateRef) replaced it. Kept for history and for
	// questions about what used to be true, out of chat context and default search.
	StateSuperseded State = "superseded"
	// StateDisputed: it and another memory (StateRef) conflict and no one has decided
	// which holds; both wait in the review queue and both are still used, marked.
	StateDisputed State = "disputed"
	// StateArchived: kept until someone forgets it, out of chat context and default
	// search. Not a tombstone: forget-me and guild purge remove it like any memory.
	StateArchived State = "archived"
)

// States lists the stored states in a stable order.
var States = []State{StateActive, StateSuperseded, StateDisputed, StateArchived}

// Valid reports whether s is a known state.
func (s State) Valid() bool { return slices.Contains(States, s) }

// Shelved reports whether the state keeps a memory out of chat context and default search
// (SearchQuery.Include brings it back).
func (s State) Shelved() bool { return s == StateSuperseded || s == StateArchived }

// Shelved reports whether m is kept out of chat context and default search.
func (m *Memory) Shelved() bool { return m.State.Shelved() }

// ShelvedStates are the states default search leaves out.
var ShelvedStates = []State{StateSuperseded, StateArchived}

// SeenByAllWhoSee reports whether everyone who may see m may also see other (SPEC §2): the
// same scope, the same origin guild, and other learned in no channel or in m's channel.
// A memory supersedes or disputes another only then, so the state it gives never tells
// anyone about a memory they could not see. It is deliberately narrower than the audience
// rules: two channels open to the same people still count as different.
func (m *Memory) SeenByAllWhoSee(other *Memory) bool {
	if m.Owner().Key() != other.Owner().Key() || m.GuildID != other.GuildID {
		return false
	}
	return other.Provenance.ChannelID == "" || other.Provenance.ChannelID == m.Provenance.ChannelID
}

// Timing is where the span of time a memory names falls against now: a time-bound memory
// (an event, a plan, a deadline) is upcoming until its span has ended, and past after.
type Timing string

const (
	TimingUpcoming Timing = "upcoming"
	TimingPast     Timing = "past"
)

// Valid reports whether t is a known timing.
func (t Timing) Valid() bool { return t == TimingUpcoming || t == TimingPast }

// TimingAt is where m's span falls at now; "" when its words name no time.
func (m *Memory) TimingAt(now time.Time) Timing {
	switch {
	case m.RefersToEnd.IsZero():
		return ""
	case m.RefersToEnd.After(now):
		return TimingUpcoming
	default:
		return TimingPast
	}
}

// Default values applied by Prepare when a field is left zero.
const (
	DefaultConfidence = 1.0
	DefaultImportance = 0.5
	maxTags           = 10
	maxTagRunes       = 32
)

// Prepare validates m and fills its derived fields: clean content, normalized form, hash,
// defaults for type, confidence and importance, and tidy tags. Call it before storing.
func (m *Memory) Prepare() error {
	if err := m.Owner().Validate(); err != nil {
		return err
	}
	content, err := CleanContent(m.Content)
	if err != nil {
		return err
	}
	m.Content = content
	m.Normalized = Normalize(content)
	m.Hash = Hash(content)
	if m.Type == "" {
		m.Type = TypeFact
	}
	if !m.Type.Valid() {
		return Errorf(EINVALID, "Unknown memory type %q: use one of %s.", string(m.Type), typeList())
	}
	if m.Source == "" {
		m.Source = SourceCommand
	}
	if !m.Source.Valid() {
		return Errorf(EINVALID, "Unknown memory source %q.", string(m.Source))
	}
	if m.Confidence == 0 {
		m.Confidence = DefaultConfidence
	}
	if m.Importance == 0 {
		m.Importance = DefaultImportance
	}
	if m.Confidence < 0 || m.Confidence > 1 || m.Importance < 0 || m.Importance > 1 {
		return Errorf(EINVALID, "Confidence and importance must be between 0 and 1.")
	}
	tags, err := CleanTags(m.Tags)
	if err != nil {
		return err
	}
	m.Tags = tags
	return nil
}

// CleanContent trims and collapses whitespace and checks the content rules: not empty, at
// most MaxContentRunes characters, and no credentials.
func CleanContent(s string) (string, error) {
	c := CollapseSpace(s)
	if c == "" {
		return "", Errorf(EINVALID, "A memory can't be empty.")
	}
	if n := utf8.RuneCountInString(c); n > MaxContentRunes {
		return "", Errorf(EINVALID, "A memory can be at most %d characters (this one has %d).", MaxContentRunes, n)
	}
	if kind, ok := DetectSecret(c); ok {
		return "", Errorf(EINVALID, "That looks like a secret (%s); kioku never stores credentials.", kind)
	}
	return c, nil
}

// CleanTags lowercases, trims and de-duplicates tags, keeping their order. A tag is
// stored and shown like content, so it passes the same credential check: a tag such as
// "password=hunter22" is refused as content would be.
func CleanTags(tags []string) ([]string, error) {
	if len(tags) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(tags))
	for i, t := range tags {
		t = strings.ToLower(CollapseSpace(t))
		if t == "" || slices.Contains(out, t) {
			continue
		}
		if utf8.RuneCountInString(t) > maxTagRunes {
			return nil, Errorf(EINVALID, "A tag can be at most %d characters.", maxTagRunes)
		}
		// The original case: a lowercased AWS key id or token is no longer its shape.
		if kind, ok := DetectSecret(CollapseSpace(tags[i])); ok {
			return nil, Errorf(EINVALID, "A tag looks like a secret (%s); kioku never stores credentials.", kind)
		}
		out = append(out, t)
	}
	if len(out) > maxTags {
		return nil, Errorf(EINVALID, "A memory can have at most %d tags.", maxTags)
	}
	return out, nil
}

// RedactTagsJSON removes the tags that hold a credential from a stored tag list (a JSON
// array), for the re-scan of data written before the detector knew them: a tag is a short
// label, and one with its credential cut out says nothing. It returns the list to store
// and whether it changed; a list it cannot read is returned as it is.
func RedactTagsJSON(stored string) (string, bool) {
	var tags []string
	if err := json.Unmarshal([]byte(stored), &tags); err != nil || len(tags) == 0 {
		return stored, false
	}
	kept := make([]string, 0, len(tags))
	for _, t := range tags {
		if _, found := DetectSecret(t); !found {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(tags) {
		return stored, false
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return stored, false
	}
	return string(b), true
}

func typeList() string {
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// String renders a memory as one line for logs and CLI output.
func (m *Memory) String() string {
	return fmt.Sprintf("#%d [%s/%s] %s", m.ID, m.Scope, m.Type, m.Content)
}

// Audience says which guild channels' memories may reach one reply or view (SPEC §2
// "Channel-aware memory"): a memory learned in channel X may be used where everyone who can
// read the reply can also read X. The bot computes it from Discord's permissions; the store
// and the prompt apply it. A nil *Audience restricts nothing beyond scope (the operator CLI,
// and places with no channel rule).
type Audience struct {
	// Channels are the guild channels whose memories may be used here.
	Channels map[string]bool
	// RulesUnknown says the guild's roles were not known when the audience was computed (a
	// guild another process receives and no process stored yet, an outage, the window after
	// a restart): Channels is then only what needs no rules, the channel itself. Unknown
	// means not visible; work that can wait (the pipeline) waits for the rules instead.
	RulesUnknown bool
}

// Allows reports whether m may be used under the audience. Memories with no recorded origin
// channel (older rows) and memories learned in DMs (no guild) follow their scope rules only.
func (a *Audience) Allows(m *Memory) bool {
	return a.AllowsOrigin(m.GuildID, m.Provenance.ChannelID)
}

// AllowsOrigin reports whether words said in channelID of guildID may be used under the
// audience: the one rule for memories (Allows) and the texts history rows quote (AllowsText).
// No channel, or no guild (a DM), leaves the decision to scope rules.
func (a *Audience) AllowsOrigin(guildID, channelID string) bool {
	if a == nil || channelID == "" || guildID == "" {
		return true
	}
	return a.Channels[channelID]
}

// AllowsText reports whether a text recorded with origin o may be shown under the audience.
// An unknown origin (nil: history written before origins were recorded) is shown only
// where nothing is restricted (the operator's nil audience).
func (a *Audience) AllowsText(o *Origin) bool {
	if a == nil {
		return true
	}
	return o != nil && a.AllowsOrigin(o.GuildID, o.ChannelID)
}
