package fakediscord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/bwmarrin/discordgo"
)

// Request is one HTTP request the fake received, recorded before the
// response was written so a client that got its answer can already see it.
type Request struct {
	// Index is the request's position among all requests the fake received
	// (its position in Requests until Forget drops some); see Mark.
	Index int
	// At is when the request arrived, before its body was read.
	At time.Time
	// Method is the HTTP method.
	Method string
	// Path is the route below the API version prefix, unescaped, such as
	// "/channels/123/messages" or "/webhooks/1/tok/messages/@original". For
	// requests outside the API (attachment downloads) it is URLPath.
	Path string
	// APIVersion is the version from the URL ("9", "10"), empty outside the API.
	APIVersion string
	// URLPath is the full request path as received.
	URLPath string
	// Query holds the URL query, such as wait=true on follow-ups.
	Query url.Values
	// Header holds the request headers (authorization included).
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// JSON is the request's JSON document: the body itself, or the
	// payload_json part of a multipart body. Nil when there is none.
	JSON json.RawMessage
	// Files are the file parts of a multipart body, in order.
	Files []File
	// Form holds multipart fields that are neither payload_json nor files, or the fields
	// of a URL-encoded form (the first value of each).
	Form map[string]string
	// Message is the decoded message for routes that create or edit one
	// (channel messages, interaction callbacks with data, webhooks).
	Message *SentMessage
	// Status is the HTTP status the fake answered with.
	Status int
	// Handled is false for routes the fake does not implement.
	Handled bool
}

// Decode unmarshals the request's JSON document into v.
func (r Request) Decode(v any) error {
	if r.JSON == nil {
		return fmt.Errorf("fakediscord: %s %s has no JSON body", r.Method, r.URLPath)
	}
	return json.Unmarshal(r.JSON, v)
}

// Match returns a predicate for WaitFor that selects requests by method and
// exact Path.
func Match(method, path string) func(Request) bool {
	return func(r Request) bool { return r.Method == method && r.Path == path }
}

// File is one uploaded file of a multipart request.
type File struct {
	// Field is the form field name discordgo used, such as "files[0]".
	Field string
	// Name is the file name, ContentType its declared type ("application/
	// octet-stream" when discordgo was given none) and Data its content.
	Name        string
	ContentType string
	Data        []byte
}

// SentMessage is a message body as the client sent it, for creating or
// editing a channel message, an interaction response or a webhook message.
// It mirrors discordgo.MessageSend but decodes components into concrete
// types, which discordgo's own send structs cannot do.
type SentMessage struct {
	// ID is the message the body created or edited, when there is one.
	ID string
	// ChannelID is the channel the message lives in.
	ChannelID string
	// Token is the interaction token for interaction responses, originals and
	// follow-ups; empty for channel messages.
	Token string

	// The message fields as sent; see discordgo.MessageSend.
	Content         string
	Embeds          []*discordgo.MessageEmbed
	Components      []discordgo.MessageComponent
	AllowedMentions *discordgo.MessageAllowedMentions
	Reference       *discordgo.MessageReference
	Flags           discordgo.MessageFlags
	TTS             bool
	// Attachments is the "attachments" array the client sent (metadata for
	// uploads, or which existing attachments an edit keeps).
	Attachments []*discordgo.MessageAttachment
	// Files are the uploaded files.
	Files []File
	// JSON is the raw JSON document.
	JSON json.RawMessage

	fields map[string]json.RawMessage
}

// Has reports whether the client sent field (a JSON key such as "content"
// or "components"), which tells an edit that clears a field from one that
// leaves it alone.
func (m *SentMessage) Has(field string) bool {
	_, ok := m.fields[field]
	return ok
}

// InteractionResponse is a recorded POST /interactions/{id}/{token}/callback.
type InteractionResponse struct {
	// InteractionID and Token identify the interaction from the URL.
	InteractionID string
	Token         string
	Type          discordgo.InteractionResponseType
	// Data is the response's message data; nil when the client sent none
	// (as for a plain deferral).
	Data *SentMessage
	// Choices are autocomplete results.
	Choices []*discordgo.ApplicationCommandOptionChoice
	// CustomID and Title describe a modal.
	CustomID string
	Title    string
	// JSON is the raw callback body.
	JSON json.RawMessage
}

// Identify is a recorded IDENTIFY. It is not discordgo.Identify because
// discordgo cannot decode its own: it sends an empty presence whose
// activity created_at is an RFC 3339 string, while its decoder expects
// milliseconds. Presence is therefore kept raw.
type Identify struct {
	// The fields as discordgo sends them; Token includes the "Bot " prefix.
	Token          string                       `json:"token"`
	Intents        discordgo.Intent             `json:"intents"`
	Compress       bool                         `json:"compress"`
	LargeThreshold int                          `json:"large_threshold"`
	Shard          *[2]int                      `json:"shard"`
	Properties     discordgo.IdentifyProperties `json:"properties"`
	Presence       json.RawMessage              `json:"presence"`
}

// GatewayPayload is one frame a client sent on the gateway.
type GatewayPayload struct {
	// Op is the gateway opcode and Data the raw "d" field.
	Op   int
	Data json.RawMessage
}

// decodeSentMessage decodes a message body and attaches the uploaded files.
func decodeSentMessage(doc json.RawMessage, files []File) (*SentMessage, error) {
	var wire struct {
		Content         string                            `json:"content"`
		Embeds          []*discordgo.MessageEmbed         `json:"embeds"`
		Components      []json.RawMessage                 `json:"components"`
		AllowedMentions *discordgo.MessageAllowedMentions `json:"allowed_mentions"`
		Reference       *discordgo.MessageReference       `json:"message_reference"`
		Flags           discordgo.MessageFlags            `json:"flags"`
		TTS             bool                              `json:"tts"`
		Attachments     []*discordgo.MessageAttachment    `json:"attachments"`
	}
	m := &SentMessage{JSON: doc, Files: files}
	if len(doc) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(doc, &m.fields); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &wire); err != nil {
		return nil, err
	}
	m.Content = wire.Content
	m.Embeds = wire.Embeds
	m.AllowedMentions = wire.AllowedMentions
	m.Reference = wire.Reference
	m.Flags = wire.Flags
	m.TTS = wire.TTS
	m.Attachments = wire.Attachments
	for _, raw := range wire.Components {
		c, err := discordgo.MessageComponentFromJSON(raw)
		if err != nil {
			return nil, err
		}
		m.Components = append(m.Components, c)
	}
	return m, nil
}

// Requests returns every HTTP request received so far, in order.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// Unhandled returns the requests for routes the fake does not implement.
func (f *Fake) Unhandled() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unhandledLocked()
}

func (f *Fake) unhandledLocked() []Request {
	out := slices.Clone(f.lostUnhandled)
	for _, r := range f.requests {
		if !r.Handled {
			out = append(out, r)
		}
	}
	return out
}

// Mark returns the number of requests received so far (those dropped by
// Forget included), to pass to WaitForSince so that only later requests are
// considered.
func (f *Fake) Mark() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forgotten + len(f.requests)
}

// Forget drops what the fake has recorded: the requests with an Index below
// before (pass Mark() for all of them; Mark and Index keep counting, and
// unhandled routes are still reported at Close), and all created, edited and
// deleted messages, interaction responses and follow-ups, gateway frames
// clients sent, and messages kept for fetches and replies (fetching one
// afterwards answers Unknown Message). Guilds, channels, members, commands,
// interactions with their original responses and the gateway sessions stay.
// A long-running test calls it now and then, with the mark up to which it has
// looked at the requests, so that the fake's memory stays bounded.
func (f *Fake) Forget(before int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := min(max(before-f.forgotten, 0), len(f.requests))
	for _, r := range f.requests[:n] {
		if !r.Handled {
			f.lostUnhandled = append(f.lostUnhandled, r)
		}
	}
	f.forgotten += n
	f.requests = slices.Clone(f.requests[n:])
	clear(f.messages)
	clear(f.edits)
	clear(f.deleted)
	// An interaction's original response stays with the interaction: the bot may still
	// edit it (a deferred answer) or press its buttons.
	originals := map[string]*discordgo.Message{}
	for _, st := range f.interactions {
		if m, ok := f.stored[st.originalID]; ok {
			originals[st.originalID] = m
		}
	}
	clear(f.stored)
	maps.Copy(f.stored, originals)
	f.responses, f.followups, f.originalEdits, f.received = nil, nil, nil, nil
	if f.session != nil && !f.session.dropped {
		// A connected client has every event dispatched so far; a dropped one keeps its
		// missed events for the RESUME.
		f.session.log.dropThrough(f.session.seq.Load())
	}
	for _, l := range f.shards {
		// So does each connected shard's; a shard whose client is gone gets no events
		// (its dispatches fail) and starts a new session when it comes back.
		if l.conn != nil {
			l.session.log.dropThrough(l.session.seq.Load())
		}
	}
	f.notifyLocked()
}

// WaitFor returns the first recorded request, since the fake started, for
// which match returns true, waiting for it if necessary. Looking at past
// requests too means a response that arrived before the call is not missed;
// use WaitForSince to skip earlier ones.
func (f *Fake) WaitFor(ctx context.Context, match func(Request) bool) (Request, error) {
	return f.WaitForSince(ctx, 0, match)
}

// WaitForSince is WaitFor over the requests with Index >= mark (see Mark).
func (f *Fake) WaitForSince(ctx context.Context, mark int, match func(Request) bool) (Request, error) {
	var found Request
	next := mark
	err := f.WaitUntil(ctx, func() bool {
		f.mu.Lock()
		var batch []Request
		if i := max(next-f.forgotten, 0); i < len(f.requests) {
			batch = slices.Clone(f.requests[i:])
		}
		f.mu.Unlock()
		for _, r := range batch {
			next = r.Index + 1
			if match(r) {
				found = r
				return true
			}
		}
		return false
	})
	return found, err
}

// Messages returns the messages created in a channel with
// POST /channels/{id}/messages, in order.
func (f *Fake) Messages(channelID string) []*SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.messages[channelID])
}

// MessageEdits returns the edits made to messages in a channel with
// PATCH /channels/{id}/messages/{mid}, in order; ID names the edited message.
func (f *Fake) MessageEdits(channelID string) []*SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.edits[channelID])
}

// DeletedMessages returns the IDs of messages deleted in a channel, through
// the channel or an interaction webhook.
func (f *Fake) DeletedMessages(channelID string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deleted[channelID])
}

// TypingCount returns how many times the client triggered the typing
// indicator in a channel.
func (f *Fake) TypingCount(channelID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.typing[channelID]
}

// InteractionResponses returns the accepted interaction callbacks, in order.
func (f *Fake) InteractionResponses() []*InteractionResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.responses)
}

// Followups returns the follow-up messages created for interactions, in order.
func (f *Fake) Followups() []*SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.followups)
}

// EditedOriginals returns the edits of interaction originals
// (PATCH /webhooks/{app}/{token}/messages/@original), in order.
func (f *Fake) EditedOriginals() []*SentMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.originalEdits)
}

// Commands returns the global commands of the last bulk overwrite, as echoed
// back with IDs, or nil when there was none.
func (f *Fake) Commands() []*discordgo.ApplicationCommand {
	return f.GuildCommands("")
}

// GuildCommands returns the commands of the last bulk overwrite for a guild.
func (f *Fake) GuildCommands(guildID string) []*discordgo.ApplicationCommand {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.commands[guildID])
}

// StoredMessage returns the current state of a message the fake knows
// (dispatched, created or edited), as a copy.
func (f *Fake) StoredMessage(id string) (*discordgo.Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.stored[id]
	if !ok {
		return nil, false
	}
	return cloneMessage(m), true
}

// OriginalResponse returns the current state of an interaction's original
// response message, after any edits, or false when it has none yet.
func (f *Fake) OriginalResponse(i *discordgo.Interaction) (*discordgo.Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.interactions[i.Token]
	if !ok || st.originalID == "" {
		return nil, false
	}
	m, ok := f.stored[st.originalID]
	if !ok {
		return nil, false
	}
	return cloneMessage(m), true
}

// Identifies returns the IDENTIFY payloads clients sent, in order; Intents
// shows what the bot asked for.
func (f *Fake) Identifies() []Identify {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.identifies)
}

// GatewayPayloads returns every frame clients sent on the gateway.
func (f *Fake) GatewayPayloads() []GatewayPayload {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.received)
}

// HeartbeatAcks returns how many heartbeats the fake has acknowledged.
func (f *Fake) HeartbeatAcks() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acks
}

// Connections returns how many gateway connections were accepted, which
// exposes unexpected reconnects.
func (f *Fake) Connections() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.connections
}

// Connected reports whether a client is identified (or resumed) on the
// gateway (with sharded clients: any shard); it turns false when that connection closes.
func (f *Fake) Connected() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, l := range f.shards {
		if l.conn != nil {
			return true
		}
	}
	return f.current != nil
}

// Resumes returns how many RESUMEs the fake accepted.
func (f *Fake) Resumes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.resumes
}

// failure is an injected error response, see FailNext.
type failure struct {
	remaining int
	match     func(Request) bool
	status    int
	body      []byte
	header    http.Header // extra response headers, may be nil
}

// FailNext makes the next n requests for which match returns true answer
// with status and a Discord-style error body {"code": code, "message":
// message}, to test how the bot copes with Discord errors. A 429 also
// carries retry_after 0, so discordgo retries at once. Match sees the request
// before it is routed (Message and Status are not set yet).
func (f *Fake) FailNext(n int, match func(Request) bool, status, code int, message string) {
	body := map[string]any{"code": code, "message": message}
	if status == http.StatusTooManyRequests {
		body["retry_after"] = 0
		body["global"] = false
	}
	raw, err := json.Marshal(body)
	if err != nil {
		panic(err) // only plain values above
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, &failure{remaining: n, match: match, status: status, body: raw})
}

// takeFailure returns the injected failure matching r, consuming one use.
func (f *Fake) takeFailure(r Request) *failure {
	f.mu.Lock()
	candidates := slices.Clone(f.failures)
	f.mu.Unlock()
	for _, fl := range candidates {
		if !fl.match(r) {
			continue
		}
		f.mu.Lock()
		ok := fl.remaining > 0
		if ok {
			fl.remaining--
		}
		f.mu.Unlock()
		if ok {
			return fl
		}
	}
	return nil
}

// cloneMessage deep-copies a message through its wire form, so the fake's
// copy and the test's never share memory.
func cloneMessage(m *discordgo.Message) *discordgo.Message {
	raw, err := marshalMessage(m)
	if err != nil {
		panic(fmt.Sprintf("fakediscord: couldn't copy message: %v", err))
	}
	var out discordgo.Message
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(fmt.Sprintf("fakediscord: couldn't copy message: %v", err))
	}
	return &out
}

// marshalMessage encodes m as Discord does. discordgo.Message tags
// Components `json:"-"` (it only knows how to decode them), so plain
// json.Marshal would silently drop buttons from every message.
func marshalMessage(m *discordgo.Message) (json.RawMessage, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	components := m.Components
	if components == nil {
		components = []discordgo.MessageComponent{}
	}
	if obj["components"], err = json.Marshal(components); err != nil {
		return nil, err
	}
	if m.ReferencedMessage != nil {
		if obj["referenced_message"], err = marshalMessage(m.ReferencedMessage); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}

// marshalInteraction encodes i, keeping the components of the messages it
// carries (see marshalMessage).
func marshalInteraction(i *discordgo.Interaction) (json.RawMessage, error) {
	raw, err := json.Marshal(i)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if i.Message != nil {
		if obj["message"], err = marshalMessage(i.Message); err != nil {
			return nil, err
		}
	}
	if data, ok := i.Data.(discordgo.ModalSubmitInteractionData); ok {
		// discordgo tags a modal's components `json:"-"` too.
		components := data.Components
		if components == nil {
			components = []discordgo.MessageComponent{}
		}
		var dataObj map[string]json.RawMessage
		if err := json.Unmarshal(obj["data"], &dataObj); err != nil {
			return nil, err
		}
		if dataObj["components"], err = json.Marshal(components); err != nil {
			return nil, err
		}
		if obj["data"], err = json.Marshal(dataObj); err != nil {
			return nil, err
		}
	}
	if data, ok := i.Data.(discordgo.ApplicationCommandInteractionData); ok && data.Resolved != nil && len(data.Resolved.Messages) > 0 {
		var dataObj, resolved map[string]json.RawMessage
		if err := json.Unmarshal(obj["data"], &dataObj); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(dataObj["resolved"], &resolved); err != nil {
			return nil, err
		}
		messages := map[string]json.RawMessage{}
		for id, m := range data.Resolved.Messages {
			if messages[id], err = marshalMessage(m); err != nil {
				return nil, err
			}
		}
		if resolved["messages"], err = json.Marshal(messages); err != nil {
			return nil, err
		}
		if dataObj["resolved"], err = json.Marshal(resolved); err != nil {
			return nil, err
		}
		if obj["data"], err = json.Marshal(dataObj); err != nil {
			return nil, err
		}
	}
	return json.Marshal(obj)
}

// ErrNoGateway is returned by dispatches before a client is ready, and by a dispatch to a
// shard whose client is not connected (its process stopped or was killed).
var ErrNoGateway = errors.New("fakediscord: no client is identified on the gateway; call WaitReady first")
