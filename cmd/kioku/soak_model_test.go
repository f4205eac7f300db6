//go:build soak

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
	"github.com/kioku-bot/kioku/tools"
)

// soakToken finds the "topic C-K" token that names turn K of conversation C.
var soakToken = regexp.MustCompile(`topic (\d+-\d+)\b`)

// soakTokens finds every such token in a prompt.
var soakTokens = regexp.MustCompile(`topic (\d+)-(\d+)\b`)

// soakFact is the memory saved for a turn, by the chat model's tool call and by the
// pipeline's extraction alike: the same content twice, so only dedup keeps it single.
func soakFact(conv int, token string) string {
	return fmt.Sprintf("Soak member %d likes topic %s", conv, token)
}

func splitToken(token string) (conv, k int) {
	a, b, _ := strings.Cut(token, "-")
	conv, _ = strconv.Atoi(a)
	k, _ = strconv.Atoi(b)
	return conv, k
}

// model is the fake provider of every process: chat turns answer after soakModelDelay
// (every soakToolEvery-th turn first saves a memory), extraction returns the turns' facts,
// and decisions always add, so that only the store's dedup keeps a fact single. While the
// model is down (a fault) it answers 500 to everything.
func (s *soak) model(req openai.ChatCompletionRequest) fakeopenai.Response {
	system := req.Messages[0].Content
	switch {
	case strings.HasPrefix(system, "You extract"):
		s.extractCalls.Add(1)
		if s.modelDown.Load() {
			return s.down()
		}
		return s.extract(req)
	case strings.HasPrefix(system, "You maintain the long-term memory"):
		s.decideCalls.Add(1)
		if s.modelDown.Load() {
			return s.down()
		}
		b, _ := json.Marshal(map[string]any{"action": "ADD", "target_id": 0, "confidence": 0.9, "reason": "The fact is new."})
		return fakeopenai.Text(string(b))
	}
	s.chatCalls.Add(1)
	var user string
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleUser {
			user = m.Content
		}
	}
	match := soakToken.FindStringSubmatch(user)
	if match == nil {
		s.fail("chat request without a turn token")
		return fakeopenai.Text("I don't know which turn this is.")
	}
	token := match[1]
	conv, k := splitToken(token)
	if conv < 0 || conv >= len(s.convs) {
		s.fail("chat request for a conversation the soak does not have")
		return fakeopenai.Text("Who is this?")
	}
	c := s.convs[conv]
	s.checkForgotten(req, c)
	last := req.Messages[len(req.Messages)-1]
	if last.Role == openai.ChatMessageRoleTool && strings.Contains(last.Content, `"ok":true`) {
		c.setFlag(k, turnToolSaved)
	}
	if s.modelDown.Load() {
		return s.down()
	}
	began := time.Now()
	time.Sleep(soakModelDelay)
	slept := time.Since(began)
	s.mu.Lock()
	s.delays[token] += slept
	s.mu.Unlock()

	if last.Role == openai.ChatMessageRoleTool {
		return fakeopenai.Text("Saved topic " + token + ".")
	}
	offered := slices.ContainsFunc(req.Tools, func(t openai.Tool) bool { return t.Function.Name == tools.NameCreateLTM })
	if k%soakToolEvery == soakToolEvery-1 && offered {
		args, _ := json.Marshal(map[string]string{"memory_content": soakFact(conv, token), "memory_scope": tools.ScopeTargetUser})
		return fakeopenai.ToolCalls(fakeopenai.Call{Name: tools.NameCreateLTM, Arguments: string(args)})
	}
	return fakeopenai.Text("Noted topic " + token + ".")
}

// down is the model's answer during an outage.
func (s *soak) down() fakeopenai.Response {
	s.failed.Add(1)
	return fakeopenai.Fail(http.StatusInternalServerError)
}

// checkForgotten fails the run when the prompt of c's turn holds words of a member who was
// forgotten before the turn was sent: forget-me reaches every process at once.
func (s *soak) checkForgotten(req openai.ChatCompletionRequest, c *soakConv) {
	sent := c.currentSent()
	for _, m := range req.Messages {
		for _, match := range soakTokens.FindAllStringSubmatch(m.Content, -1) {
			conv, _ := strconv.Atoi(match[1])
			k, _ := strconv.Atoi(match[2])
			if conv >= 0 && conv < len(s.convs) && s.convs[conv].forgotten(k, sent) {
				s.fail(fmt.Sprintf("a prompt holds the words of a member forgotten before its turn (%s message)", m.Role))
				return
			}
		}
	}
}

// extract answers an extraction request with one personal fact per member turn, at most
// the 20 the pipeline accepts.
func (s *soak) extract(req openai.ChatCompletionRequest) fakeopenai.Response {
	body := req.Messages[len(req.Messages)-1].Content
	start, end := strings.Index(body, "<conversation>\n"), strings.LastIndex(body, "\n</conversation>")
	var records []struct {
		N         int    `json:"n"`
		SpeakerID string `json:"speaker_id"`
		Bot       bool   `json:"bot"`
		Text      string `json:"text"`
	}
	if start < 0 || end < start {
		s.fail("extraction request without a conversation block")
		return fakeopenai.Text(`{"facts":[],"entities":[]}`)
	}
	if err := json.Unmarshal([]byte(body[start+len("<conversation>\n"):end]), &records); err != nil {
		s.fail("extraction conversation is not JSON")
		return fakeopenai.Text(`{"facts":[],"entities":[]}`)
	}
	facts := []map[string]any{}
	for _, r := range records {
		match := soakToken.FindStringSubmatch(r.Text)
		if r.Bot || match == nil || len(facts) == 20 {
			continue
		}
		conv, k := splitToken(match[1])
		if conv >= 0 && conv < len(s.convs) {
			s.convs[conv].setFlag(k, turnExtracted)
		}
		facts = append(facts, map[string]any{"content": soakFact(conv, match[1]), "type": "preference", "confidence": 0.9,
			"scope": "personal", "subject_id": r.SpeakerID, "evidence": []int{r.N}})
	}
	b, _ := json.Marshal(map[string]any{"facts": facts, "entities": []any{}})
	return fakeopenai.Text(string(b))
}
