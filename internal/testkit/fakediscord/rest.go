package fakediscord

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"
)

// apiVersions are the REST prefixes the fake serves. discordgo v0.29.0 uses
// v9 (its APIVersion variable); v10 is what Discord documents today.
var apiVersions = []string{"9", "10"}

// Discord JSON error codes the fake answers with.
const (
	codeUnknownChannel     = 10003
	codeUnknownGuild       = 10004
	codeUnknownMember      = 10007
	codeUnknownMessage     = 10008
	codeUnknownWebhook     = 10015
	codeUnknownInteraction = 10062
	codeMissingAccess      = 50001
	codeInvalidBody        = 50035
	codeAlreadyAcked       = 40060
)

// exchange carries one request through routing; handlers fill in what the
// recorder needs.
type exchange struct {
	req     *Request
	handled bool
}

type exchangeKey struct{}

// route registers a handler for every API version prefix.
func (f *Fake) route(method, path string, h func(http.ResponseWriter, *http.Request, *exchange)) {
	for _, v := range apiVersions {
		f.mux.HandleFunc(method+" /api/v"+v+path, func(w http.ResponseWriter, r *http.Request) {
			h(w, r, r.Context().Value(exchangeKey{}).(*exchange))
		})
	}
}

func (f *Fake) routes() {
	f.route("GET", "/gateway", f.getGateway)
	f.route("GET", "/gateway/bot", f.getGatewayBot)
	f.route("GET", "/users/@me", f.getCurrentUser)
	f.route("POST", "/users/@me/channels", f.createDM)

	f.route("GET", "/channels/{channel}", f.getChannel)
	f.route("POST", "/channels/{channel}/typing", f.typingIndicator)
	f.route("POST", "/channels/{channel}/messages", f.createMessage)
	f.route("GET", "/channels/{channel}/messages/{message}", f.getMessage)
	f.route("PATCH", "/channels/{channel}/messages/{message}", f.editMessage)
	f.route("DELETE", "/channels/{channel}/messages/{message}", f.deleteMessage)

	f.route("GET", "/guilds/{guild}", f.getGuild)
	f.route("GET", "/guilds/{guild}/channels", f.getGuildChannels)
	f.route("GET", "/guilds/{guild}/roles", f.getGuildRoles)
	f.route("GET", "/guilds/{guild}/members/{user}", f.getMember)

	f.route("PUT", "/applications/{app}/commands", f.bulkOverwriteCommands)
	f.route("PUT", "/applications/{app}/guilds/{guild}/commands", f.bulkOverwriteCommands)
	f.route("GET", "/applications/{app}/commands", f.getCommands)
	f.route("GET", "/applications/{app}/guilds/{guild}/commands", f.getCommands)

	f.route("POST", "/interactions/{interaction}/{token}/callback", f.interactionCallback)
	f.route("POST", "/webhooks/{app}/{token}", f.createFollowup)
	f.route("GET", "/webhooks/{app}/{token}/messages/{message}", f.getWebhookMessage)
	f.route("PATCH", "/webhooks/{app}/{token}/messages/{message}", f.editWebhookMessage)
	f.route("DELETE", "/webhooks/{app}/{token}/messages/{message}", f.deleteWebhookMessage)

	f.oauthRoutes()

	f.mux.HandleFunc("GET /attachments/", f.getAttachment)
	f.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.notFound(w, r.Context().Value(exchangeKey{}).(*exchange))
	})
}

// serveHTTP records every request. The handler writes into a buffer so the
// record exists before the client sees the response.
func (f *Fake) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/gateway" || r.URL.Path == "/gateway/" {
		// discordgo appends a slash to the URL from GET /gateway before
		// adding its query, so both forms arrive.
		f.serveGateway(w, r)
		return
	}
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := &Request{
		At:      at,
		Method:  r.Method,
		Path:    r.URL.Path,
		URLPath: r.URL.Path,
		Query:   r.URL.Query(),
		Header:  r.Header.Clone(),
		Body:    body,
	}
	for _, v := range apiVersions {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/api/v"+v+"/"); ok {
			req.APIVersion, req.Path = v, "/"+rest
			break
		}
	}
	ex := &exchange{req: req, handled: true}
	rec := httptest.NewRecorder()
	if bodyErr := parseBody(r.Header.Get("Content-Type"), req); bodyErr != nil {
		writeError(rec, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: "+bodyErr.Error())
	} else if fl := f.takeFailure(*req); fl != nil {
		maps.Copy(rec.Header(), fl.header)
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(fl.status)
		_, _ = rec.Write(fl.body)
	} else {
		r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex))
		f.mux.ServeHTTP(rec, r)
	}
	req.Status = rec.Code
	req.Handled = ex.handled

	f.mu.Lock()
	req.Index = f.forgotten + len(f.requests)
	f.requests = append(f.requests, *req)
	f.notifyLocked()
	f.mu.Unlock()

	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// parseBody fills in JSON, Files and Form from a JSON, multipart or URL-encoded body.
func parseBody(contentType string, req *Request) error {
	if len(req.Body) == 0 {
		return nil
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err == nil && mediaType == "application/x-www-form-urlencoded" {
		values, err := url.ParseQuery(string(req.Body))
		if err != nil {
			return err
		}
		req.Form = map[string]string{}
		for k := range values {
			req.Form[k] = values.Get(k)
		}
		return nil
	}
	if err != nil || mediaType != "multipart/form-data" {
		if !json.Valid(req.Body) {
			return errors.New("body is not valid JSON")
		}
		req.JSON = req.Body
		return nil
	}
	mr := multipart.NewReader(bytes.NewReader(req.Body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return err
		}
		switch {
		case part.FormName() == "payload_json":
			if !json.Valid(data) {
				return errors.New("payload_json is not valid JSON")
			}
			req.JSON = data
		case part.FileName() != "":
			req.Files = append(req.Files, File{
				Field:       part.FormName(),
				Name:        part.FileName(),
				ContentType: part.Header.Get("Content-Type"),
				Data:        data,
			})
		default:
			if req.Form == nil {
				req.Form = map[string]string{}
			}
			req.Form[part.FormName()] = string(data)
		}
	}
}

// writeJSON answers 200 with v encoded. Encoding errors are programming
// errors in the fake and answer 500 so the test notices.
func writeJSON(w http.ResponseWriter, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, 0, "fake couldn't encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(raw)
}

// writeError answers with Discord's JSON error shape.
func writeError(w http.ResponseWriter, status, code int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	raw, _ := json.Marshal(discordgo.APIErrorMessage{Code: code, Message: message})
	_, _ = w.Write(raw)
}

// notFound answers a route the fake does not implement the way Discord
// answers an unknown route, and marks it unhandled.
func (f *Fake) notFound(w http.ResponseWriter, ex *exchange) {
	ex.handled = false
	writeError(w, http.StatusNotFound, 0, "404: Not Found")
}

// sentMessage decodes the request's message body and files, answering 400
// when the body is not a message.
func sentMessage(w http.ResponseWriter, ex *exchange) (*SentMessage, bool) {
	m, err := decodeSentMessage(ex.req.JSON, ex.req.Files)
	if err == nil {
		err = checkMessageLimits(m)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: "+err.Error())
		return nil, false
	}
	ex.req.Message = m
	return m, true
}

func (f *Fake) getGateway(w http.ResponseWriter, _ *http.Request, _ *exchange) {
	writeJSON(w, map[string]string{"url": f.GatewayURL()})
}

func (f *Fake) getGatewayBot(w http.ResponseWriter, _ *http.Request, _ *exchange) {
	writeJSON(w, discordgo.GatewayBotResponse{
		URL:    f.GatewayURL(),
		Shards: f.recommendedShards,
		SessionStartLimit: discordgo.SessionInformation{
			Total: 1000, Remaining: 1000, ResetAfter: 0, MaxConcurrency: 1,
		},
	})
}

// getCurrentUser answers the bot user for the bot's token, and the member a bearer token
// was issued to (OAuth2, oauth.go).
func (f *Fake) getCurrentUser(w http.ResponseWriter, r *http.Request, _ *exchange) {
	if g, ok := f.bearerGrant(w, r); ok {
		if g != nil {
			writeJSON(w, g.user)
		}
		return
	}
	writeJSON(w, f.BotUser())
}

func (f *Fake) createDM(w http.ResponseWriter, _ *http.Request, ex *exchange) {
	var body struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := ex.req.Decode(&body); err != nil || body.RecipientID == "" {
		writeError(w, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: recipient_id is required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.channels {
		if ch.Type == discordgo.ChannelTypeDM && len(ch.Recipients) == 1 && ch.Recipients[0].ID == body.RecipientID {
			writeJSON(w, ch)
			return
		}
	}
	ch := &discordgo.Channel{
		ID:         f.NewSnowflake(),
		Type:       discordgo.ChannelTypeDM,
		Recipients: []*discordgo.User{{ID: body.RecipientID}},
	}
	f.channels[ch.ID] = ch
	writeJSON(w, ch)
}

func (f *Fake) getChannel(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.channels[r.PathValue("channel")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	writeJSON(w, ch)
}

func (f *Fake) typingIndicator(w http.ResponseWriter, r *http.Request, _ *exchange) {
	channelID := r.PathValue("channel")
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.channels[channelID]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	f.typing[channelID]++
	f.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) createMessage(w http.ResponseWriter, r *http.Request, ex *exchange) {
	channelID := r.PathValue("channel")
	sm, ok := sentMessage(w, ex)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.channels[channelID]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownChannel, "Unknown Channel")
		return
	}
	if sm.Content == "" && len(sm.Embeds) == 0 && len(sm.Files) == 0 && len(sm.Components) == 0 {
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	sm.ID, sm.ChannelID = f.NewSnowflake(), channelID
	m := f.newBotMessageLocked(sm)
	f.messages[channelID] = append(f.messages[channelID], sm)
	f.notifyLocked()
	f.writeMessageLocked(w, m)
}

func (f *Fake) getMessage(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.stored[r.PathValue("message")]
	if !ok || m.ChannelID != r.PathValue("channel") {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	}
	f.writeMessageLocked(w, m)
}

func (f *Fake) editMessage(w http.ResponseWriter, r *http.Request, ex *exchange) {
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	sm, ok := sentMessage(w, ex)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.stored[messageID]
	if !ok || m.ChannelID != channelID {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	}
	sm.ID, sm.ChannelID = messageID, channelID
	f.applyEditLocked(m, sm)
	f.edits[channelID] = append(f.edits[channelID], sm)
	f.notifyLocked()
	f.writeMessageLocked(w, m)
}

func (f *Fake) deleteMessage(w http.ResponseWriter, r *http.Request, _ *exchange) {
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.stored[messageID]
	if !ok || m.ChannelID != channelID {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return
	}
	delete(f.stored, messageID)
	f.deleted[channelID] = append(f.deleted[channelID], messageID)
	f.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

func (f *Fake) getGuild(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.guilds[r.PathValue("guild")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownGuild, "Unknown Guild")
		return
	}
	writeJSON(w, g)
}

func (f *Fake) getGuildChannels(w http.ResponseWriter, r *http.Request, _ *exchange) {
	guildID := r.PathValue("guild")
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.guilds[guildID]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownGuild, "Unknown Guild")
		return
	}
	channels := []*discordgo.Channel{}
	for _, id := range slices.Sorted(maps.Keys(f.channels)) {
		if ch := f.channels[id]; ch.GuildID == guildID {
			channels = append(channels, ch)
		}
	}
	writeJSON(w, channels)
}

func (f *Fake) getGuildRoles(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, ok := f.guilds[r.PathValue("guild")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownGuild, "Unknown Guild")
		return
	}
	roles := g.Roles
	if roles == nil {
		roles = []*discordgo.Role{}
	}
	writeJSON(w, roles)
}

func (f *Fake) getMember(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	guildID := r.PathValue("guild")
	if _, ok := f.guilds[guildID]; !ok {
		writeError(w, http.StatusNotFound, codeUnknownGuild, "Unknown Guild")
		return
	}
	m, ok := f.members[guildID][r.PathValue("user")]
	if !ok {
		writeError(w, http.StatusNotFound, codeUnknownMember, "Unknown Member")
		return
	}
	writeJSON(w, m)
}

// bulkOverwriteCommands replaces the command set of the application (or one
// guild) and echoes it back with IDs. Like Discord, a command keeps its ID
// when one of the same name and type existed before.
func (f *Fake) bulkOverwriteCommands(w http.ResponseWriter, r *http.Request, ex *exchange) {
	if r.PathValue("app") != f.appID {
		writeError(w, http.StatusForbidden, codeMissingAccess, "Missing Access")
		return
	}
	var cmds []*discordgo.ApplicationCommand
	if err := ex.req.Decode(&cmds); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: "+err.Error())
		return
	}
	guildID := r.PathValue("guild")
	f.mu.Lock()
	defer f.mu.Unlock()
	previous := f.commands[guildID]
	for _, c := range cmds {
		if c.Type == 0 {
			c.Type = discordgo.ChatApplicationCommand
		}
		c.ID = f.NewSnowflake()
		for _, p := range previous {
			if p.Name == c.Name && p.Type == c.Type {
				c.ID = p.ID
			}
		}
		c.ApplicationID, c.GuildID, c.Version = f.appID, guildID, f.NewSnowflake()
	}
	if cmds == nil {
		cmds = []*discordgo.ApplicationCommand{}
	}
	f.commands[guildID] = cmds
	f.notifyLocked()
	writeJSON(w, cmds)
}

func (f *Fake) getCommands(w http.ResponseWriter, r *http.Request, _ *exchange) {
	if r.PathValue("app") != f.appID {
		writeError(w, http.StatusForbidden, codeMissingAccess, "Missing Access")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cmds := f.commands[r.PathValue("guild")]
	if cmds == nil {
		cmds = []*discordgo.ApplicationCommand{}
	}
	writeJSON(w, cmds)
}

// interactionState tracks what Discord knows about an interaction: whether
// it was acknowledged and which message is its "original".
type interactionState struct {
	id        string
	channelID string
	guildID   string
	message   *discordgo.Message // the message a component sits on

	acknowledged bool
	originalID   string
}

func (f *Fake) registerInteraction(i *discordgo.Interaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.interactions[i.Token]; ok {
		return
	}
	st := &interactionState{id: i.ID, channelID: i.ChannelID, guildID: i.GuildID}
	var author *discordgo.User
	if i.Member != nil {
		author = i.Member.User
	} else {
		author = i.User
	}
	f.ensureChannelLocked(i.ChannelID, i.GuildID, author)
	if i.Message != nil {
		st.message = cloneMessage(i.Message)
		if _, ok := f.stored[i.Message.ID]; !ok {
			f.stored[i.Message.ID] = cloneMessage(i.Message)
		}
	}
	f.interactions[i.Token] = st
}

func (f *Fake) interactionCallback(w http.ResponseWriter, r *http.Request, ex *exchange) {
	token := r.PathValue("token")
	var body struct {
		Type discordgo.InteractionResponseType `json:"type"`
		Data json.RawMessage                   `json:"data"`
	}
	if err := ex.req.Decode(&body); err != nil || body.Type == 0 {
		writeError(w, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: type is required")
		return
	}
	resp := &InteractionResponse{
		InteractionID: r.PathValue("interaction"),
		Token:         token,
		Type:          body.Type,
		JSON:          ex.req.JSON,
	}
	if len(body.Data) > 0 && string(body.Data) != "null" {
		var extra struct {
			Choices  []*discordgo.ApplicationCommandOptionChoice `json:"choices"`
			CustomID string                                      `json:"custom_id"`
			Title    string                                      `json:"title"`
		}
		if err := json.Unmarshal(body.Data, &extra); err != nil {
			writeError(w, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: "+err.Error())
			return
		}
		resp.Choices, resp.CustomID, resp.Title = extra.Choices, extra.CustomID, extra.Title
		data, err := decodeSentMessage(body.Data, ex.req.Files)
		if err == nil {
			err = checkMessageLimits(data)
		}
		if err == nil {
			err = checkCallbackLimits(body.Type, extra.Choices, extra.Title)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalidBody, "Invalid Form Body: "+err.Error())
			return
		}
		data.Token = token
		resp.Data = data
		ex.req.Message = data
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.interactions[token]
	if !ok || st.id != resp.InteractionID {
		writeError(w, http.StatusNotFound, codeUnknownInteraction, "Unknown interaction")
		return
	}
	if st.acknowledged {
		writeError(w, http.StatusBadRequest, codeAlreadyAcked, "Interaction has already been acknowledged.")
		return
	}
	st.acknowledged = true
	data := resp.Data
	if data == nil {
		data = &SentMessage{Token: token}
	}
	switch resp.Type {
	case discordgo.InteractionResponseChannelMessageWithSource,
		discordgo.InteractionResponseDeferredChannelMessageWithSource:
		data.ID, data.ChannelID = f.NewSnowflake(), st.channelID
		m := f.newBotMessageLocked(data)
		m.WebhookID = f.appID
		if resp.Type == discordgo.InteractionResponseDeferredChannelMessageWithSource {
			// The "bot is thinking" placeholder until the original is edited.
			m.Content, m.Flags = "", data.Flags|discordgo.MessageFlagsLoading
		}
		st.originalID = m.ID
	case discordgo.InteractionResponseDeferredMessageUpdate,
		discordgo.InteractionResponseUpdateMessage:
		if st.message != nil {
			st.originalID = st.message.ID
			data.ID, data.ChannelID = st.message.ID, st.message.ChannelID
			if m, ok := f.stored[st.message.ID]; ok && resp.Type == discordgo.InteractionResponseUpdateMessage {
				f.applyEditLocked(m, data)
			}
		}
	}
	f.responses = append(f.responses, resp)
	f.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// webhookInteractionLocked resolves an interaction webhook route, answering
// Unknown Webhook when the app or token is wrong or the interaction has not
// been acknowledged, as Discord does.
func (f *Fake) webhookInteractionLocked(w http.ResponseWriter, r *http.Request) (*interactionState, bool) {
	st, ok := f.interactions[r.PathValue("token")]
	if r.PathValue("app") != f.appID || !ok || !st.acknowledged {
		writeError(w, http.StatusNotFound, codeUnknownWebhook, "Unknown Webhook")
		return nil, false
	}
	return st, true
}

// webhookMessageLocked resolves the message of a webhook message route:
// "@original" or a follow-up ID.
func (f *Fake) webhookMessageLocked(w http.ResponseWriter, r *http.Request, st *interactionState) (*discordgo.Message, bool) {
	id := r.PathValue("message")
	if id == "@original" {
		id = st.originalID
	}
	m, ok := f.stored[id]
	if id == "" || !ok {
		writeError(w, http.StatusNotFound, codeUnknownMessage, "Unknown Message")
		return nil, false
	}
	return m, true
}

// createFollowup always answers with the message: for interaction webhooks
// Discord treats wait as true.
func (f *Fake) createFollowup(w http.ResponseWriter, r *http.Request, ex *exchange) {
	sm, ok := sentMessage(w, ex)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.webhookInteractionLocked(w, r)
	if !ok {
		return
	}
	sm.ID, sm.ChannelID, sm.Token = f.NewSnowflake(), st.channelID, r.PathValue("token")
	m := f.newBotMessageLocked(sm)
	m.WebhookID = f.appID
	f.followups = append(f.followups, sm)
	f.notifyLocked()
	f.writeMessageLocked(w, m)
}

func (f *Fake) getWebhookMessage(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.webhookInteractionLocked(w, r)
	if !ok {
		return
	}
	if m, ok := f.webhookMessageLocked(w, r, st); ok {
		f.writeMessageLocked(w, m)
	}
}

func (f *Fake) editWebhookMessage(w http.ResponseWriter, r *http.Request, ex *exchange) {
	sm, ok := sentMessage(w, ex)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.webhookInteractionLocked(w, r)
	if !ok {
		return
	}
	m, ok := f.webhookMessageLocked(w, r, st)
	if !ok {
		return
	}
	sm.ID, sm.ChannelID, sm.Token = m.ID, m.ChannelID, r.PathValue("token")
	f.applyEditLocked(m, sm)
	if r.PathValue("message") == "@original" {
		f.originalEdits = append(f.originalEdits, sm)
	}
	f.notifyLocked()
	f.writeMessageLocked(w, m)
}

func (f *Fake) deleteWebhookMessage(w http.ResponseWriter, r *http.Request, _ *exchange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.webhookInteractionLocked(w, r)
	if !ok {
		return
	}
	m, ok := f.webhookMessageLocked(w, r, st)
	if !ok {
		return
	}
	delete(f.stored, m.ID)
	f.deleted[m.ChannelID] = append(f.deleted[m.ChannelID], m.ID)
	f.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// newBotMessageLocked stores and returns the message the bot created with sm
// (whose ID and ChannelID are set), uploading its files as attachments.
func (f *Fake) newBotMessageLocked(sm *SentMessage) *discordgo.Message {
	m := &discordgo.Message{
		ID:               sm.ID,
		ChannelID:        sm.ChannelID,
		Content:          sm.Content,
		Timestamp:        time.Now().UTC(),
		Author:           f.BotUser(),
		Embeds:           sm.Embeds,
		Components:       sm.Components,
		Flags:            sm.Flags,
		MessageReference: sm.Reference,
		Type:             discordgo.MessageTypeDefault,
		Attachments:      []*discordgo.MessageAttachment{},
		Mentions:         []*discordgo.User{},
	}
	if ch, ok := f.channels[sm.ChannelID]; ok {
		m.GuildID = ch.GuildID
	}
	if sm.Reference != nil {
		m.Type = discordgo.MessageTypeReply
		if ref, ok := f.stored[sm.Reference.MessageID]; ok {
			m.ReferencedMessage = cloneMessage(ref)
		}
	}
	if m.Embeds == nil {
		m.Embeds = []*discordgo.MessageEmbed{}
	}
	for _, file := range sm.Files {
		m.Attachments = append(m.Attachments, f.uploadLocked(sm.ChannelID, file))
	}
	f.stored[m.ID] = m
	return m
}

// applyEditLocked applies the fields an edit carries to a stored message.
func (f *Fake) applyEditLocked(m *discordgo.Message, sm *SentMessage) {
	if sm.Has("content") {
		m.Content = sm.Content
	}
	if sm.Has("embeds") {
		m.Embeds = sm.Embeds
	}
	if sm.Has("components") {
		m.Components = sm.Components
	}
	if sm.Has("flags") {
		m.Flags = sm.Flags
	}
	if sm.Has("attachments") {
		keep := map[string]bool{}
		for _, a := range sm.Attachments {
			keep[a.ID] = true
		}
		m.Attachments = slices.DeleteFunc(m.Attachments, func(a *discordgo.MessageAttachment) bool { return !keep[a.ID] })
	}
	for _, file := range sm.Files {
		m.Attachments = append(m.Attachments, f.uploadLocked(m.ChannelID, file))
	}
	// Editing the original of a deferred response ends the "thinking" state.
	m.Flags &^= discordgo.MessageFlagsLoading
	now := time.Now().UTC()
	m.EditedTimestamp = &now
}

func (f *Fake) writeMessageLocked(w http.ResponseWriter, m *discordgo.Message) {
	raw, err := marshalMessage(m)
	if err != nil {
		writeError(w, http.StatusInternalServerError, 0, "fake couldn't encode message: "+err.Error())
		return
	}
	writeJSON(w, raw)
}
