package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/internal/testkit/fakeopenai"
)

// kioku chat runs the real turn engine on the configured database and model: a memory the
// model saves in the terminal is in the database afterwards, as the user's personal memory.
func TestChatCommand(t *testing.T) {
	ai := fakeopenai.New(t)
	ai.Script(
		fakeopenai.ToolCalls(fakeopenai.Call{Name: "create_long_term_memory",
			Arguments: `{"memory_content":"Kai prefers green tea","memory_scope":"target_user"}`}),
		fakeopenai.Text("Noted, green tea it is."),
		fakeopenai.Text("You prefer green tea."),
	)
	db := filepath.Join(t.TempDir(), "k.db")
	// The background pipeline would take scripted replies; TestChatLearnsWhatIsSaidInPassing
	// covers it.
	env := map[string]string{"KIOKU_DB": db, "KIOKU_LLM_BASE_URL": ai.URL(), "KIOKU_LLM_API_KEY": fakeopenai.APIKey, "KIOKU_HTTP_ADDR": "",
		"KIOKU_PIPELINE_MODE": "off"}
	code, stdout, stderr := runApp(t, env, "remember that I prefer green tea\nwhich tea do I like?\n/quit\n", "chat", "--user", "kai")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mustContain(t, "chat output", stdout, "Noted, green tea it is.", "📌 Remembered (personal)", "You prefer green tea.")
	reqs := ai.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d chat requests, want 3", len(reqs))
	}
	var prompt strings.Builder
	for _, m := range reqs[2].Messages {
		prompt.WriteString(m.Content)
	}
	if !regexp.MustCompile(`\[id:\d+\][^\n]*Kai prefers green tea`).MatchString(prompt.String()) {
		t.Errorf("the second turn's prompt lacks the saved memory:\n%s", prompt.String())
	}

	code, stdout, stderr = runApp(t, map[string]string{"KIOKU_DB": db}, "", "memories", "list", "--user", "kai", "--json")
	if code != 0 || !strings.Contains(stdout, "Kai prefers green tea") {
		t.Fatalf("memories list: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
