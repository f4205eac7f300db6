package fakeopenai_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

func TestModels(t *testing.T) {
	s := fakeopenai.New(t)
	c := newClient(s)
	list, err := c.ListModels(context.Background())
	if err != nil || len(list.Models) != 0 {
		t.Fatalf("models before ServeModels: %+v, %v; want none", list.Models, err)
	}
	s.ServeModels("chat-model", "embed-model")
	list, err = c.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Models {
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, []string{"chat-model", "embed-model"}) {
		t.Errorf("models = %v", ids)
	}
	s.Down()
	if _, err := c.ListModels(context.Background()); statusOf(t, err) != http.StatusServiceUnavailable {
		t.Errorf("models while down: %v, want 503", err)
	}
}
