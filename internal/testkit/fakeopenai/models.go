package fakeopenai

import (
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// ModelsPath is the endpoint that lists the models a provider serves; `kioku doctor` asks
// it to check the URL, the key and the model names.
const ModelsPath = "/v1/models"

// ServeModels sets the model ids GET ModelsPath lists; none are listed until it is called.
func (s *Server) ServeModels(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), ids...)
}

// serveModels answers ModelsPath like the real API, honouring Down and RequireAuth.
func (s *Server) serveModels(w *statusWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "fake: "+ModelsPath+" needs GET, got "+r.Method)
		return
	}
	s.mu.Lock()
	down, requireAuth, ids := s.down, s.requireAuth, s.models
	s.mu.Unlock()
	if down {
		writeError(w, http.StatusServiceUnavailable, "fake: provider is down")
		return
	}
	if requireAuth && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		writeError(w, http.StatusUnauthorized, "fake: missing bearer token in Authorization header")
		return
	}
	list := openai.ModelsList{Models: make([]openai.Model, 0, len(ids))}
	for _, id := range ids {
		list.Models = append(list.Models, openai.Model{ID: id, Object: "model", OwnedBy: "fake"})
	}
	writeJSON(w, http.StatusOK, list)
}
