// Package fakeopenai is an OpenAI-compatible server on loopback for tests.
//
// It speaks the endpoints kioku uses, /v1/chat/completions (tool calls
// included), /v1/embeddings and /v1/models, so tests drive the real go-openai
// client over real HTTP instead of mocking it. Chat replies come from a
// script; embeddings are a deterministic hashed bag of words (see EmbedText)
// that ranks texts sharing words as similar. Every request is recorded, and failures (HTTP
// errors, stalls, dropped connections, a whole-provider outage) can be
// injected to exercise retries and degradation.
//
// Only non-streaming chat completions are supported: a request with
// "stream": true is rejected with 400, because kioku never streams.
package fakeopenai

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
)

// APIKey is a key tests can hand to their client. The fake only checks that
// some bearer token is present, never its value.
const APIKey = "sk-fake-kioku"

// Paths of the endpoints the fake serves, relative to the server root.
const (
	ChatPath       = "/v1/chat/completions"
	EmbeddingsPath = "/v1/embeddings"
)

// maxBodyBytes bounds request bodies so a runaway test cannot make the fake
// buffer unbounded memory.
const maxBodyBytes = 32 << 20

// Recorded is one request the fake received, in arrival order.
type Recorded struct {
	// Method and Path are as received.
	Method string
	Path   string
	// Header is a copy of the request headers (Authorization included, so
	// tests can check what the client sends).
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Chat is the decoded request for ChatPath, nil if it did not decode.
	Chat *openai.ChatCompletionRequest
	// Embedding is the decoded request for EmbeddingsPath, nil if it did not
	// decode. A single string input is recorded as a one-element Input.
	Embedding *openai.EmbeddingRequestStrings
	// Status is the HTTP status the fake answered with; 0 while the request
	// is still being handled, or if the connection was dropped or the client
	// went away first.
	Status int

	// n identifies the record so its Status can be filled in after
	// ResetRequests may have shifted the slice.
	n int
}

// Server is a fake OpenAI-compatible API. All methods are safe for
// concurrent use, including from inside handlers and the OnRequest hook.
type Server struct {
	srv     *httptest.Server
	closing chan struct{}

	mu          sync.Mutex
	script      []Response
	def         func(req openai.ChatCompletionRequest) Response
	chatFail    injected
	embedFail   injected
	down        bool
	requireAuth bool
	dims        int
	models      []string
	hook        func(r *http.Request)
	records     []Recorded
	received    int
	seq         int
}

// injected is a pending "fail the next n calls with status" instruction.
type injected struct {
	status int
	n      int
}

// New starts a fake server on loopback and closes it when the test ends.
// Authorization is required and embeddings have DefaultDims dimensions until
// changed.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{
		closing:     make(chan struct{}),
		requireAuth: true,
		dims:        DefaultDims,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	tb.Cleanup(func() {
		// Release hanging handlers first: httptest.Server.Close waits for
		// every in-flight request to finish.
		close(s.closing)
		s.srv.Close()
	})
	return s
}

// URL is the base URL for go-openai's ClientConfig.BaseURL (it ends in /v1).
func (s *Server) URL() string {
	return s.srv.URL + "/v1"
}

// ClientConfig is a go-openai configuration pointing at the fake with APIKey,
// for tests that talk to the fake without kioku's own client.
func (s *Server) ClientConfig() openai.ClientConfig {
	cfg := openai.DefaultConfig(APIKey)
	cfg.BaseURL = s.URL()
	return cfg
}

// Script queues chat replies, consumed one per chat request in order, after
// any FailNext failures and before the Default handler.
func (s *Server) Script(responses ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, responses...)
}

// Remaining is the number of scripted replies not consumed yet, so a test can
// assert that the code under test made exactly the calls it scripted.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// Default sets the reply used when the script is empty; nil restores the
// built-in Text(DefaultReply).
func (s *Server) Default(fn func(req openai.ChatCompletionRequest) Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = fn
}

// FailNext makes the next n chat requests fail with status (OpenAI-style
// error body) without consuming the script, so a test can put failures in
// front of an existing script.
func (s *Server) FailNext(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatFail = injected{status: status, n: n}
}

// FailEmbeddings makes the next n embedding requests fail with status.
func (s *Server) FailEmbeddings(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFail = injected{status: status, n: n}
}

// Down makes every request fail with 503 until Up, like a provider outage.
// Requests are still recorded and the OnRequest hook still runs.
func (s *Server) Down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = true
}

// Up ends an outage started by Down.
func (s *Server) Up() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = false
}

// RequireAuth sets whether requests without an Authorization header are
// rejected with 401 (the default). Turn it off to test keyless providers
// such as a local Ollama, to which go-openai sends no header at all.
func (s *Server) RequireAuth(required bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requireAuth = required
}

// SetDims sets the embedding size for requests that do not ask for one;
// n <= 0 restores DefaultDims.
func (s *Server) SetDims(n int) {
	if n <= 0 {
		n = DefaultDims
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dims = n
}

// Dims is the current default embedding size.
func (s *Server) Dims() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dims
}

// Embed is the vector the fake returns for text at its current default size,
// so tests can compute expected similarities or seed stores directly.
func (s *Server) Embed(text string) []float32 {
	return EmbedText(text, s.Dims())
}

// OnRequest sets a hook called for every request before it is answered (nil
// removes it). It runs on the handler goroutine without the server's lock,
// so it may block, call the server's methods or fail the test; tests use it
// to assert invariants that must hold during any model call. The request body
// has already been read and is replaced by a fresh reader over the same bytes.
func (s *Server) OnRequest(fn func(r *http.Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = fn
}

// Requests returns a copy of everything received so far, in arrival order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Recorded, len(s.records))
	copy(out, s.records)
	return out
}

// ChatRequests returns every chat request that decoded, in arrival order,
// including those answered with an error (so retries are visible).
func (s *Server) ChatRequests() []openai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []openai.ChatCompletionRequest
	for _, r := range s.records {
		if r.Chat != nil {
			out = append(out, *r.Chat)
		}
	}
	return out
}

// EmbeddingRequests returns every embedding request that decoded, in arrival
// order, including those answered with an error.
func (s *Server) EmbeddingRequests() []openai.EmbeddingRequestStrings {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []openai.EmbeddingRequestStrings
	for _, r := range s.records {
		if r.Embedding != nil {
			out = append(out, *r.Embedding)
		}
	}
	return out
}

// ChatCount is the number of requests to ChatPath, malformed ones included.
func (s *Server) ChatCount() int {
	return s.countPath(ChatPath)
}

// EmbeddingCount is the number of requests to EmbeddingsPath, malformed ones
// included.
func (s *Server) EmbeddingCount() int {
	return s.countPath(EmbeddingsPath)
}

func (s *Server) countPath(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.records {
		if r.Path == path {
			n++
		}
	}
	return n
}

// ResetRequests forgets recorded requests, for tests that only care about
// calls made after some setup.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = nil
}

// serveHTTP records the request, runs the hook, then answers it.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("couldn't read request body: %v", err))
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	rec := Recorded{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var chatReq *openai.ChatCompletionRequest
	var embedReq *openai.EmbeddingRequestStrings
	var decodeErr error
	switch r.URL.Path {
	case ChatPath:
		chatReq, decodeErr = decodeChat(body)
		rec.Chat = chatReq
	case EmbeddingsPath:
		embedReq, decodeErr = decodeEmbedding(body)
		rec.Embedding = embedReq
	}

	s.mu.Lock()
	s.received++
	rec.n = s.received
	s.records = append(s.records, rec)
	hook := s.hook
	s.mu.Unlock()

	sw := &statusWriter{ResponseWriter: w}
	defer s.setStatus(rec.n, sw)

	if hook != nil {
		hook(r)
	}
	if r.URL.Path == ModelsPath {
		s.serveModels(sw, r)
		return
	}

	if r.URL.Path != ChatPath && r.URL.Path != EmbeddingsPath {
		writeError(sw, http.StatusNotFound, fmt.Sprintf("fake: no endpoint %s", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		writeError(sw, http.StatusMethodNotAllowed, fmt.Sprintf("fake: %s needs POST, got %s", r.URL.Path, r.Method))
		return
	}

	s.mu.Lock()
	down, requireAuth := s.down, s.requireAuth
	s.mu.Unlock()
	if down {
		writeError(sw, http.StatusServiceUnavailable, "fake: provider is down")
		return
	}
	if requireAuth && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		writeError(sw, http.StatusUnauthorized, "fake: missing bearer token in Authorization header")
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeError(sw, http.StatusBadRequest, fmt.Sprintf("fake: Content-Type must be application/json, got %q", ct))
		return
	}
	if decodeErr != nil {
		writeError(sw, http.StatusBadRequest, decodeErr.Error())
		return
	}

	if chatReq != nil {
		s.serveChat(sw, r, *chatReq)
		return
	}
	s.serveEmbeddings(sw, *embedReq)
}

// setStatus fills in the answered status of record n, if it is still kept.
func (s *Server) setStatus(n int, sw *statusWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.records) - 1; i >= 0; i-- {
		if s.records[i].n == n {
			s.records[i].Status = sw.status
			return
		}
	}
}

// decodeChat parses and validates a chat request the way the real API
// rejects obviously wrong ones, so client bugs surface as 400s in tests.
func decodeChat(body []byte) (*openai.ChatCompletionRequest, error) {
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("fake: malformed chat request body: %v", err)
	}
	switch {
	case req.Model == "":
		return &req, fmt.Errorf("fake: you must provide a model parameter")
	case len(req.Messages) == 0:
		return &req, fmt.Errorf("fake: messages must not be empty")
	case req.Stream:
		return &req, fmt.Errorf("fake: streaming is not supported")
	}
	return &req, nil
}

// decodeEmbedding parses and validates an embedding request. Input may be a
// string or an array of strings; token arrays are not supported.
func decodeEmbedding(body []byte) (*openai.EmbeddingRequestStrings, error) {
	var raw struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		User           string          `json:"user"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("fake: malformed embedding request body: %v", err)
	}
	req := openai.EmbeddingRequestStrings{
		Model:          openai.EmbeddingModel(raw.Model),
		User:           raw.User,
		EncodingFormat: openai.EmbeddingEncodingFormat(raw.EncodingFormat),
		Dimensions:     raw.Dimensions,
	}
	var one string
	if err := json.Unmarshal(raw.Input, &one); err == nil {
		req.Input = []string{one}
	} else if err := json.Unmarshal(raw.Input, &req.Input); err != nil {
		return nil, fmt.Errorf("fake: input must be a string or an array of strings")
	}
	switch {
	case req.Model == "":
		return &req, fmt.Errorf("fake: you must provide a model parameter")
	case len(req.Input) == 0:
		return &req, fmt.Errorf("fake: input must not be empty")
	case req.Dimensions < 0:
		return &req, fmt.Errorf("fake: dimensions must be positive")
	case req.EncodingFormat != "" && req.EncodingFormat != openai.EmbeddingEncodingFormatFloat &&
		req.EncodingFormat != openai.EmbeddingEncodingFormatBase64:
		return &req, fmt.Errorf("fake: unknown encoding_format %q", req.EncodingFormat)
	}
	return &req, nil
}

// maxHandlerDepth stops a handler that keeps returning handlers.
const maxHandlerDepth = 8

func (s *Server) serveChat(w *statusWriter, r *http.Request, req openai.ChatCompletionRequest) {
	resp := s.nextChat(req)
	for depth := 0; resp.Handler != nil; depth++ {
		if depth == maxHandlerDepth {
			writeError(w, http.StatusInternalServerError, "fake: handlers nested too deeply")
			return
		}
		resp = resp.Handler(req)
	}

	switch {
	case resp.Drop:
		drop(w)
		return
	case resp.Hang:
		select {
		case <-r.Context().Done():
		case <-s.closing:
			writeError(w, http.StatusServiceUnavailable, "fake: server closing")
		}
		return
	case resp.failed():
		if resp.Body != "" {
			writeRaw(w, resp.Status, resp.Body)
		} else {
			writeError(w, resp.Status, fmt.Sprintf("fake: scripted failure (status %d)", resp.Status))
		}
		return
	}

	s.mu.Lock()
	s.seq++
	id := s.seq
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: resp.Content}
	completionChars := len(resp.Content)
	for _, c := range resp.ToolCalls {
		if c.ID == "" {
			s.seq++
			c.ID = fmt.Sprintf("call_%d", s.seq)
		}
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:       c.ID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		})
		completionChars += len(c.Name) + len(c.Arguments)
	}
	s.mu.Unlock()

	finish := resp.FinishReason
	if finish == "" {
		finish = openai.FinishReasonStop
		if len(msg.ToolCalls) > 0 {
			finish = openai.FinishReasonToolCalls
		}
	}
	usage := resp.Usage
	if usage == nil {
		prompt := estimateTokens(promptChars(req))
		completion := estimateTokens(completionChars)
		usage = &openai.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	}
	writeJSON(w, http.StatusOK, openai.ChatCompletionResponse{
		ID:      fmt.Sprintf("chatcmpl-fake-%d", id),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   req.Model,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   *usage,
	})
}

// nextChat picks the reply for one chat request: injected failures first,
// then the script, then the default.
func (s *Server) nextChat(req openai.ChatCompletionRequest) Response {
	s.mu.Lock()
	if s.chatFail.n > 0 {
		s.chatFail.n--
		status := s.chatFail.status
		s.mu.Unlock()
		return Fail(status)
	}
	if len(s.script) > 0 {
		resp := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return resp
	}
	def := s.def
	s.mu.Unlock()
	if def == nil {
		return Text(DefaultReply)
	}
	return def(req)
}

func promptChars(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, p := range m.MultiContent {
			n += len(p.Text)
		}
		for _, c := range m.ToolCalls {
			n += len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	return n
}

func (s *Server) serveEmbeddings(w *statusWriter, req openai.EmbeddingRequestStrings) {
	s.mu.Lock()
	if s.embedFail.n > 0 {
		s.embedFail.n--
		status := s.embedFail.status
		s.mu.Unlock()
		writeError(w, status, fmt.Sprintf("fake: injected embedding failure (status %d)", status))
		return
	}
	dims := s.dims
	s.mu.Unlock()
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}

	tokens := 0
	vectors := make([][]float32, len(req.Input))
	for i, text := range req.Input {
		vectors[i] = EmbedText(text, dims)
		tokens += estimateTokens(len(text))
	}
	usage := openai.Usage{PromptTokens: tokens, TotalTokens: tokens}

	if req.EncodingFormat == openai.EmbeddingEncodingFormatBase64 {
		type item struct {
			Object    string `json:"object"`
			Embedding string `json:"embedding"`
			Index     int    `json:"index"`
		}
		data := make([]item, len(vectors))
		for i, v := range vectors {
			buf := make([]byte, 4*len(v))
			for j, x := range v {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
			}
			data[i] = item{Object: "embedding", Embedding: base64.StdEncoding.EncodeToString(buf), Index: i}
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"object": "list", "data": data, "model": req.Model, "usage": usage,
		})
		return
	}

	data := make([]openai.Embedding, len(vectors))
	for i, v := range vectors {
		data[i] = openai.Embedding{Object: "embedding", Embedding: v, Index: i}
	}
	writeJSON(w, http.StatusOK, openai.EmbeddingResponse{
		Object: "list", Data: data, Model: req.Model, Usage: usage,
	})
}

// statusWriter remembers the status written, for Recorded.Status.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

// drop closes the connection without a response.
func drop(w *statusWriter) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		// httptest's HTTP/1.1 server always supports hijacking; keep a
		// visible failure rather than a silent success if that changes.
		writeError(w, http.StatusInternalServerError, "fake: cannot drop connection")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	conn.Close()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("fake: couldn't encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// writeRaw sends a scripted error body as is, labelled JSON only when it is.
func writeRaw(w http.ResponseWriter, status int, body string) {
	if json.Valid([]byte(body)) {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// writeError sends an OpenAI-style error object, which go-openai decodes
// into *openai.APIError with the HTTP status filled in.
func writeError(w http.ResponseWriter, status int, message string) {
	type apiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	e := apiError{Message: message, Type: errorType(status)}
	if status == http.StatusTooManyRequests {
		code := "rate_limit_exceeded"
		e.Code = &code
	}
	body, _ := json.Marshal(map[string]apiError{"error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}
