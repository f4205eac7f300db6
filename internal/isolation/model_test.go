package isolation

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// The adversarial model. It can only repeat tokens of the request it answers (a model
// cannot know what it was never shown), and does everything else wrong on purpose: random
// scopes and targets, ids of other scopes, guilds, channels and deleted memories, forged
// subjects (ids of people who did not speak, the display name two members share), wrong
// or missing evidence. Its chat replies carry no token, so a token in a reply, notice or
// later prompt got there through kioku, never through the model quoting someone.

type requestKind int

const (
	kindChat requestKind = iota
	kindExtract
	kindDecide
)

func (k requestKind) String() string {
	return [...]string{"chat", "extraction", "decision"}[k]
}

// seenRequest is what the oracle checks of one model request: its kind, its tokens and,
// for the pipeline, the channel of the job it was made for.
type seenRequest struct {
	kind    requestKind
	tokens  []string
	channel string // pipeline requests: the leased job's channel
	guild   string
	text    string // kept for the failure message only
}

type adversary struct {
	mu  sync.Mutex
	rng *rand.Rand
	// maxID is the largest memory id the oracle has seen, so made-up ids are near real ones.
	maxID int64
	// job returns the guild and channel of the pipeline job being run.
	job  func() (guild, channel string)
	seen []seenRequest
}

var idRe = regexp.MustCompile(`\[id:(\d+)\]|"memory_id":\s*(\d+)|#(\d+)`)

// requestText is everything a request shows the model.
func requestText(req openai.ChatCompletionRequest) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		b.WriteByte('\n')
		for _, p := range m.MultiContent {
			b.WriteString(p.Text)
			b.WriteByte('\n')
		}
		for _, tc := range m.ToolCalls {
			b.WriteString(tc.Function.Arguments)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// take returns the requests seen since the last call.
func (a *adversary) take() []seenRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.seen
	a.seen = nil
	return out
}

// knownMaxID is the highest memory id seen so far.
func (a *adversary) knownMaxID() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.maxID
}

func (a *adversary) setMaxID(id int64) {
	a.mu.Lock()
	a.maxID = max(a.maxID, id)
	a.mu.Unlock()
}

func (a *adversary) answer(req openai.ChatCompletionRequest) fakeopenai.Response {
	a.mu.Lock()
	defer a.mu.Unlock()
	text := requestText(req)
	toks := tokensIn(text)
	sys := ""
	if len(req.Messages) > 0 && req.Messages[0].Role == openai.ChatMessageRoleSystem {
		sys = req.Messages[0].Content
	}
	var ids []int64
	for _, m := range idRe.FindAllStringSubmatch(text, -1) {
		for _, g := range m[1:] {
			if n, err := strconv.ParseInt(g, 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
	}
	rec := seenRequest{tokens: toks, text: text}
	var resp fakeopenai.Response
	switch {
	case strings.HasPrefix(sys, "You extract long-term memories"):
		rec.kind = kindExtract
		rec.guild, rec.channel = a.job()
		resp = fakeopenai.Text(a.extraction(text, toks))
	case strings.HasPrefix(sys, "You maintain the long-term memory"):
		rec.kind = kindDecide
		rec.guild, rec.channel = a.job()
		resp = fakeopenai.Text(a.decision(toks, ids))
	default:
		rec.kind = kindChat
		resp = a.chat(req, toks, ids)
	}
	a.seen = append(a.seen, rec)
	return resp
}

// some returns 1 to n tokens of toks, or a filler word when it saw none.
func (a *adversary) some(toks []string, n int) string {
	if len(toks) == 0 {
		return "nothing"
	}
	k := 1 + a.rng.IntN(n)
	parts := make([]string, k)
	for i := range parts {
		parts[i] = toks[a.rng.IntN(len(toks))]
	}
	return strings.Join(parts, " ")
}

// anyID is an id the model "remembers": one it was shown, or one near the real ones
// (other scopes, guilds, channels, deleted memories, ids that do not exist).
func (a *adversary) anyID(ids []int64) int64 {
	if len(ids) > 0 && a.rng.IntN(2) == 0 {
		return ids[a.rng.IntN(len(ids))]
	}
	return 1 + a.rng.Int64N(a.maxID+3)
}

// anyone is a target or subject: a member id, a mention, a display name, the speaker, or a
// stranger.
func (a *adversary) anyone() string {
	m := a.rng.IntN(numMembers)
	switch a.rng.IntN(6) {
	case 0:
		return ""
	case 1:
		return "<@" + memberID(m) + ">"
	case 2:
		return displayNames[m]
	case 3:
		return "73999" // nobody here
	case 4:
		return "me"
	}
	return memberID(m)
}

func (a *adversary) pick(options ...string) string { return options[a.rng.IntN(len(options))] }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (a *adversary) chat(req openai.ChatCompletionRequest, toks []string, ids []int64) fakeopenai.Response {
	rounds := 0
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0 {
			rounds++
		}
	}
	// At most three rounds, and often one: each round costs a request and tool calls,
	// and the walk is paced by them.
	if rounds >= 2 || a.rng.IntN(2) == 0 {
		return fakeopenai.Text(a.pick("Okay.", "Got it, thanks!", "I'm not sure about that.", "Noted."))
	}
	var calls []fakeopenai.Call
	for range 1 + a.rng.IntN(2) {
		switch a.rng.IntN(5) {
		case 0, 1:
			args := map[string]any{"memory_content": "note " + a.some(toks, 3),
				"memory_scope": a.pick("server_wide", "target_user", "target_user")}
			if t := a.anyone(); t != "" {
				args["target_user"] = t
			}
			calls = append(calls, fakeopenai.Call{Name: "create_long_term_memory", Arguments: mustJSON(args)})
		case 2:
			content := ""
			if a.rng.IntN(3) > 0 {
				content = "changed " + a.some(toks, 3)
			}
			calls = append(calls, fakeopenai.Call{Name: "update_long_term_memory",
				Arguments: mustJSON(map[string]any{"memory_id": a.anyID(ids), "memory_content": content})})
		case 3:
			args := map[string]any{"query": a.some(toks, 2)}
			if s := a.pick("", "server", "personal"); s != "" {
				args["scope"] = s
			}
			calls = append(calls, fakeopenai.Call{Name: "search_memories", Arguments: mustJSON(args)})
		case 4:
			calls = append(calls, fakeopenai.Call{Name: "update_short_term_memory",
				Arguments: mustJSON(map[string]any{"summary": "summary " + a.some(toks, 4)})})
		}
	}
	return fakeopenai.ToolCalls(calls...)
}

func (a *adversary) extraction(text string, toks []string) string {
	records := strings.Count(text, `{"n":`)
	var facts []map[string]any
	for range a.rng.IntN(4) {
		f := map[string]any{"content": "fact about " + a.some(toks, 3) + " for later"}
		if a.rng.IntN(5) > 0 {
			f["confidence"] = []float64{0.5, 0.8, 0.95, 1}[a.rng.IntN(4)]
		}
		if s := a.pick("server", "personal", "weird", ""); s != "" {
			f["scope"] = s
		}
		if s := a.anyone(); s != "" || a.rng.IntN(2) == 0 {
			f["subject_id"] = s
		}
		f["type"] = a.pick("fact", "preference", "decision", "bogus")
		switch a.rng.IntN(4) {
		case 0: // no evidence
		case 1:
			f["evidence"] = []any{}
		case 2:
			f["evidence"] = fmt.Sprintf("#%d", a.rng.IntN(records+3))
		default:
			var ev []int
			for range 1 + a.rng.IntN(3) {
				ev = append(ev, a.rng.IntN(records+3))
			}
			f["evidence"] = ev
		}
		facts = append(facts, f)
	}
	if facts == nil {
		facts = []map[string]any{}
	}
	return mustJSON(map[string]any{"facts": facts, "entities": []any{}})
}

func (a *adversary) decision(toks []string, ids []int64) string {
	d := map[string]any{"action": a.pick("ADD", "UPDATE", "UPDATE", "DELETE", "DELETE", "NONE"),
		"confidence": 0.9, "reason": "the adversary says so"}
	if a.rng.IntN(3) == 0 {
		d["target_id"] = 1 + a.rng.Int64N(a.maxID+3)
	} else if len(ids) > 0 {
		d["target_id"] = ids[a.rng.IntN(len(ids))]
	}
	if a.rng.IntN(2) == 0 {
		// Now and then the opposite of an earlier update: the pipeline flags the two as
		// contradicting, and each one's history quotes the other.
		d["content"] = "updated fact " + a.some(toks, 3) + a.pick(" for later", " for later", " not for later")
	}
	return mustJSON(d)
}
