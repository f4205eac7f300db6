package bot

import (
	"context"
	"testing"

	"github.com/kioku-bot/kioku/i18n"
	"github.com/kioku-bot/kioku/internal/testkit"
	"github.com/kioku-bot/kioku/memory"
)

// TestHiddenReadsLikeMissingInEveryLanguage: a memory learned in a channel the member
// cannot view must answer exactly like a memory that does not exist, in every language, or
// the difference would tell the member it is there.
func TestHiddenReadsLikeMissingInEveryLanguage(t *testing.T) {
	store := testkit.MustOpenStore(t)
	for _, owner := range []memory.Owner{memory.ServerOwner("1"), memory.PersonalOwner("2")} {
		_, missing := store.Memories.Get(context.Background(), owner, 4242)
		if memory.ErrorCode(missing) != memory.ENOTFOUND {
			t.Fatalf("missing memory: %v", missing)
		}
		for _, l := range i18n.Locales {
			if got, want := errorText(errNotVisible(owner, 4242), l), errorText(missing, l); got != want {
				t.Errorf("%s %s: hidden reads %q, missing reads %q", owner.Scope, l, got, want)
			}
		}
	}
}
