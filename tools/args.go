package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/stm"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// Tool names, as the model sees and calls them (SPEC §3 step 5).
const (
	NameCreateLTM = "create_long_term_memory"
	NameUpdateLTM = "update_long_term_memory"
	NameUpdateSTM = "update_short_term_memory"
	NameSearch    = "search_memories"
)

// Values of CreateArgs.MemoryScope.
const (
	ScopeServerWide = "server_wide"
	ScopeTargetUser = "target_user"
)

// Values of SearchArgs.Scope.
const (
	SearchAll      = "all"
	SearchServer   = "server"
	SearchPersonal = "personal"
)

// CreateArgs are the arguments of create_long_term_memory. The struct is both the JSON
// schema sent to the model and the shape its arguments are validated against.
type CreateArgs struct {
	MemoryContent string `json:"memory_content" description:"The fact to keep, written so it makes sense on its own later (e.g. 'Aiko prefers green tea'). At most 2000 characters. Never credentials or secrets."`
	MemoryScope   string `json:"memory_scope" enum:"server_wide,target_user" description:"server_wide: shared knowledge about this server and its community, visible to everyone here. target_user: a personal memory about one participant."`
	TargetUser    string `json:"target_user,omitempty" description:"For target_user: the user id of the participant the memory is about, as listed in the instructions. Omit it for the author of the latest message."`
}

// UpdateArgs are the arguments of update_long_term_memory.
type UpdateArgs struct {
	MemoryID      int64  `json:"memory_id" description:"The id of the memory to change, the N of [id:N]."`
	MemoryContent string `json:"memory_content" description:"The corrected memory, replacing the old content whole. An empty string forgets the memory (it stays recoverable by people for a while)."`
}

// STMArgs are the arguments of update_short_term_memory.
type STMArgs struct {
	Summary string `json:"summary" description:"A concise summary of this conversation so far (who wants what, open questions, decisions), at most 1500 characters. It replaces the previous summary and is kept for about a day."`
}

// SearchArgs are the arguments of search_memories.
type SearchArgs struct {
	Query string `json:"query" description:"Words to look for in stored memories."`
	Scope string `json:"scope,omitempty" enum:"all,server,personal" description:"Which memories to search: server (this server's shared memory), personal (personal memories of the people in this conversation) or all (the default)."`
	Type  string `json:"type,omitempty" enum:"fact,preference,decision,procedural,semantic,event" description:"Only memories of this type."`
	// Tags is a list for the model, which sends lists more reliably than comma-joined text.
	Tags     []string `json:"tags,omitempty" description:"Only memories carrying all these tags."`
	Since    string   `json:"since,omitempty" description:"Only memories from this date on: 2025-06-01, or an age such as 7d, 2w, 12h."`
	Until    string   `json:"until,omitempty" description:"Only memories up to this date (the whole day), or an age such as 30d."`
	Pinned   bool     `json:"pinned,omitempty" description:"Only pinned memories."`
	Author   string   `json:"author,omitempty" description:"Only memories said or saved by this user id."`
	MinScore float64  `json:"min_score,omitempty" description:"Leave out matches scoring under this, 0 to 1 (default 0)."`
}

// validate checks what a schema cannot say: the content rules of SPEC §2 (size, no
// credentials) and that the scope exists in this conversation.
func (a *CreateArgs) validate(c *Conversation) error {
	content, err := memory.CleanContent(a.MemoryContent)
	if err != nil {
		return err
	}
	a.MemoryContent = content
	a.TargetUser = strings.TrimSpace(a.TargetUser)
	if a.MemoryScope == ScopeServerWide {
		if c.IsDM() {
			return memory.Errorf(memory.EINVALID, "This is a direct message, where only personal memory exists: use memory_scope target_user.")
		}
		if a.TargetUser != "" {
			return memory.Errorf(memory.EINVALID, "target_user only goes with memory_scope target_user; a server_wide memory belongs to no one user.")
		}
	}
	return nil
}

// validate checks the id and, unless the call forgets the memory, the new content.
func (a *UpdateArgs) validate() error {
	if a.MemoryID <= 0 {
		return memory.Errorf(memory.EINVALID, "memory_id must be a positive memory id, the N of [id:N].")
	}
	if strings.TrimSpace(a.MemoryContent) == "" {
		a.MemoryContent = ""
		return nil
	}
	content, err := memory.CleanContent(a.MemoryContent)
	if err != nil {
		return err
	}
	a.MemoryContent = content
	return nil
}

// validate rejects an empty summary (the model should not wipe the conversation's
// summary by accident) and one over the short-term memory limit, naming the length so the
// model can shorten it; credentials are redacted rather than refused because the summary
// lives only in memory and passive capture keeps the same words anyway.
func (a *STMArgs) validate() error {
	a.Summary = memory.RedactSecrets(strings.TrimSpace(a.Summary))
	if a.Summary == "" {
		return memory.Errorf(memory.EINVALID, "summary is empty; write a short summary of the conversation so far.")
	}
	if n := len([]rune(a.Summary)); n > stm.MaxSummaryChars {
		return memory.Errorf(memory.EINVALID, "summary has %d characters; the limit is %d. Shorten it and call again.", n, stm.MaxSummaryChars)
	}
	return nil
}

// MaxQueryRunes bounds a search_memories query. A query is a few words; a longer one
// costs recall a full-text term per word and an embedding call over the whole text (an
// embedding provider refusing it pauses the vector leg for every conversation), so it is
// refused with its length and the model can retry with fewer words.
const MaxQueryRunes = 1000

// validate requires words to search for, at most MaxQueryRunes characters, and a scope
// that exists here.
func (a *SearchArgs) validate(c *Conversation) error {
	a.Query = memory.CollapseSpace(a.Query)
	if a.Query == "" {
		return memory.Errorf(memory.EINVALID, "query is empty; give a few words to search for.")
	}
	if n := utf8.RuneCountInString(a.Query); n > MaxQueryRunes {
		return memory.Errorf(memory.EINVALID, "query has %d characters; the limit is %d. Search for a few words.", n, MaxQueryRunes)
	}
	if a.Scope == "" {
		a.Scope = SearchAll
	}
	if a.Scope == SearchServer && c.IsDM() {
		return memory.Errorf(memory.EINVALID, "This is a direct message, where no server memory exists: search personal or all.")
	}
	return nil
}

// filters puts the filter arguments into q, refusing values that cannot match anything
// with a message that names them; ages count back from now.
func (a *SearchArgs) filters(q *memory.SearchQuery, now time.Time) error {
	if a.Type != "" {
		q.Types = []memory.Type{memory.Type(strings.ToLower(a.Type))}
	}
	for _, t := range a.Tags {
		if t = strings.TrimSpace(t); t != "" {
			q.Tags = append(q.Tags, t)
		}
	}
	var err error
	if q.Since, err = memory.ParseSearchDate("since", a.Since, now, false); err != nil {
		return err
	}
	if q.Until, err = memory.ParseSearchDate("until", a.Until, now, true); err != nil {
		return err
	}
	q.PinnedOnly = a.Pinned
	// The model copies mentions as often as bare ids.
	q.AuthorID = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(a.Author), "<@"), "!"), ">")
	q.MinScore = a.MinScore
	return q.ValidateFilters()
}

// Schemas generated once from the args structs. GenerateSchemaForType only fails for
// types JSON schema cannot express, which a test would catch, so a panic at start-up is
// the honest outcome.
var (
	createSchema = mustSchema(CreateArgs{})
	updateSchema = mustSchema(UpdateArgs{})
	stmSchema    = mustSchema(STMArgs{})
	searchSchema = mustSchema(SearchArgs{})
)

func mustSchema(v any) *jsonschema.Definition {
	def, err := jsonschema.GenerateSchemaForType(v)
	if err != nil {
		panic(fmt.Sprintf("tools: couldn't generate schema for %T: %v", v, err))
	}
	// An empty $defs map carries no information; leaving it out keeps the request small
	// and avoids confusing strict OpenAI-compatible servers.
	def.Defs = nil
	settle(def)
	return def
}

// settle gives every definition in d that has no Properties map an empty one. go-openai's
// Definition.MarshalJSON fills it in as it marshals otherwise, and these definitions are
// shared by every turn: concurrent requests wrote it at once. An empty map is left out of
// the JSON (omitempty), so the requests are the same.
func settle(d *jsonschema.Definition) {
	if d == nil {
		return
	}
	if d.Properties == nil {
		d.Properties = map[string]jsonschema.Definition{}
	}
	for k, p := range d.Properties {
		settle(&p)
		d.Properties[k] = p
	}
	for k, p := range d.Defs {
		settle(&p)
		d.Defs[k] = p
	}
	for i := range d.AnyOf {
		settle(&d.AnyOf[i])
	}
	settle(d.Items)
}

// dmCreateSchema is createSchema for direct messages, where only the personal scope
// exists, so the model is not offered a choice it cannot make.
func dmCreateSchema() *jsonschema.Definition {
	def := *createSchema
	def.Properties = maps.Clone(createSchema.Properties)
	scope := def.Properties["memory_scope"]
	scope.Enum = []string{ScopeTargetUser}
	scope.Description = "Always target_user here: this is a direct message, where only personal memory exists."
	def.Properties["memory_scope"] = scope
	return &def
}

// MaxArgumentBytes bounds the raw arguments of one tool call. The largest call a tool
// accepts (a 2,000-character memory or a 1,500-character summary, even with every character
// JSON-escaped) is well under it; bigger arguments are refused before they are parsed, so a
// model emitting megabytes costs a turn neither the parse nor the memory.
const MaxArgumentBytes = 64 << 10

// MaxArgumentFields bounds the fields of one call's arguments object. Every tool takes at
// most three, and error messages name unexpected fields, so without a bound thousands of
// them would come back to the model as an error as large as the arguments.
const MaxArgumentFields = 16

// decodeArgs validates raw tool-call arguments against def and decodes them into v. It is
// more forgiving than the schema in two ways models commonly need (null for an omitted
// optional field, and an empty string for one) and more helpful in its errors: the
// generic validator only says "validation failed", which a model cannot act on, so the
// failing field and the expected shape are named first.
func decodeArgs(def *jsonschema.Definition, raw string, v any) error {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "{}"
	}
	if len(raw) > MaxArgumentBytes {
		return memory.Errorf(memory.EINVALID, "The arguments are %d bytes; the limit is %d. Send only the fields %s, with shorter values.", len(raw), MaxArgumentBytes, fieldList(def))
	}
	var data any
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		return memory.Errorf(memory.EINVALID, "The arguments are not valid JSON (%v). Send a JSON object.", err)
	}
	obj, ok := data.(map[string]any)
	if !ok {
		return memory.Errorf(memory.EINVALID, "The arguments must be a JSON object with the fields %s.", fieldList(def))
	}
	if len(obj) > MaxArgumentFields {
		return memory.Errorf(memory.EINVALID, "The arguments have %d fields; the limit is %d. Send only the fields %s.", len(obj), MaxArgumentFields, fieldList(def))
	}
	for k, val := range obj {
		if val == nil {
			delete(obj, k)
			continue
		}
		if s, ok := val.(string); ok && s == "" && !slices.Contains(def.Required, k) {
			delete(obj, k)
		}
	}
	var missing, unknown []string
	for _, k := range def.Required {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		prop, known := def.Properties[k]
		if !known {
			unknown = append(unknown, k)
			continue
		}
		if !jsonschema.Validate(prop, obj[k]) {
			return memory.Errorf(memory.EINVALID, "%s must be %s.", k, describe(prop))
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("Missing required field(s): %s.", strings.Join(missing, ", "))
		if len(unknown) > 0 {
			msg += fmt.Sprintf(" Unexpected field(s): %s.", strings.Join(unknown, ", "))
		}
		return memory.Errorf(memory.EINVALID, "%s The fields are %s.", msg, fieldList(def))
	}
	cleaned, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("couldn't re-encode tool arguments: %w", err)
	}
	if err := def.Unmarshal(string(cleaned), v); err != nil {
		return memory.Errorf(memory.EINVALID, "The arguments don't match the tool's schema (%v).", err)
	}
	return nil
}

// describe renders what a property accepts, for error messages.
func describe(d jsonschema.Definition) string {
	if len(d.Enum) > 0 {
		return "one of " + strings.Join(d.Enum, ", ")
	}
	switch d.Type {
	case jsonschema.Integer:
		return "a whole number"
	case jsonschema.Number:
		return "a number"
	case jsonschema.String:
		return "a string"
	case jsonschema.Boolean:
		return "true or false"
	}
	return string(d.Type)
}

// fieldList names a schema's fields, required ones first, for error messages.
func fieldList(def *jsonschema.Definition) string {
	names := slices.Sorted(maps.Keys(def.Properties))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		p := n + " (" + describe(def.Properties[n])
		if !slices.Contains(def.Required, n) {
			p += ", optional"
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, ", ")
}
