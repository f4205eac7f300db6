package pgtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/ltm/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// childEnv marks the run of this test binary that TestSkipsAreCounted starts.
const childEnv = "PGTEST_SKIP_CHILD"

// TestSkipsAreCounted: a test binary whose PostgreSQL tests skipped for want of
// KIOKU_TEST_POSTGRES ends with one line naming its package and the count, on stderr (and
// on the terminal, when there is one), so a bare "ok" no longer reads as a pass.
func TestSkipsAreCounted(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		pgtest.URL(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSkipsAreCounted$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, pgtest.EnvURL+"=") && !strings.HasPrefix(kv, pgtest.EnvRequire+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child run: %v\n%s", err, out)
	}
	want := "ltm/postgres/pgtest: 1 PostgreSQL test skipped: KIOKU_TEST_POSTGRES is not set"
	if !strings.Contains(string(out), want) {
		t.Errorf("the child's output lacks %q:\n%s", want, out)
	}
}
