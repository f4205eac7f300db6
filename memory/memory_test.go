package memory_test

import (
	"strings"
	"testing"

	"github.com/kioku-bot/kioku/memory"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"TrimsAndCollapsesWhitespace", "  I   prefer\tgreen\n\ntea  ", "i prefer green tea"},
		{"LowercasesASCII", "I Prefer GREEN Tea", "i prefer green tea"},
		{"StripsTrailingPunctuation", "I prefer green tea!!!", "i prefer green tea"},
		{"KeepsInnerPunctuation", "v1.2, then v2.", "v1.2, then v2"},
		{"FoldsFullWidthLatin", "Ｉ ｐｒｅｆｅｒ ＧＲＥＥＮ ｔｅａ！", "i prefer green tea"},
		{"IdeographicSpace", "緑茶が\u3000好き", "緑茶が 好き"},
		{"StripsJapanesePeriod", "緑茶が好きです。", "緑茶が好きです"},
		{"FoldsHalfWidthKatakana", "ｸﾞﾘｰﾝﾃｨｰ", "グリーンティー"},
		{"KeepsTrailingEmoji", "tea time 🍵", "tea time 🍵"},
		{"OnlyPunctuation", "...", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := memory.Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHash(t *testing.T) {
	t.Run("SameForEquivalentContent", func(t *testing.T) {
		a := memory.Hash("I prefer green tea.")
		for _, s := range []string{"i prefer green tea", "  I  PREFER green tea!", "Ｉ prefer ｇｒｅｅｎ tea"} {
			if got := memory.Hash(s); got != a {
				t.Errorf("Hash(%q) differs from Hash(%q)", s, "I prefer green tea.")
			}
		}
	})
	t.Run("IsSHA256OfNormalizedForm", func(t *testing.T) {
		if got := memory.Hash("I prefer green tea."); got != sha256Hex("i prefer green tea") {
			t.Errorf("Hash = %s, want sha256 of the normalized form", got)
		}
	})
	t.Run("DiffersForDifferentContent", func(t *testing.T) {
		if memory.Hash("green tea") == memory.Hash("black tea") {
			t.Error("different content hashed the same")
		}
	})
	t.Run("PunctuationOnlyFallsBackToStorageForm", func(t *testing.T) {
		if memory.Hash("...") == memory.Hash("!!!") {
			t.Error("punctuation-only contents collided")
		}
	})
	t.Run("JapanesePeriodIgnored", func(t *testing.T) {
		if memory.Hash("猫の名前はミソ。") != memory.Hash("猫の名前はミソ") {
			t.Error("trailing 。 changed the hash")
		}
	})
}

func TestPrepare(t *testing.T) {
	valid := func() memory.Memory {
		return memory.Memory{Scope: memory.ScopeServer, GuildID: "g1", Content: "  The raid is on Friday.  "}
	}
	t.Run("FillsDerivedFields", func(t *testing.T) {
		m := valid()
		if err := m.Prepare(); err != nil {
			t.Fatal(err)
		}
		if m.Content != "The raid is on Friday." || m.Normalized != "the raid is on friday" || m.Type != memory.TypeFact ||
			m.Hash != memory.Hash("the raid is on friday") || m.Importance != memory.DefaultImportance {
			t.Errorf("unexpected prepared memory: %+v", m)
		}
	})
	cases := []struct {
		name   string
		mutate func(*memory.Memory)
	}{
		{"ErrEmpty", func(m *memory.Memory) { m.Content = " \n\t " }},
		{"ErrTooLong", func(m *memory.Memory) { m.Content = strings.Repeat("あ", memory.MaxContentRunes+1) }},
		{"ErrUnknownType", func(m *memory.Memory) { m.Type = "gossip" }},
		{"ErrServerWithoutGuild", func(m *memory.Memory) { m.GuildID = "" }},
		{"ErrPersonalWithoutUser", func(m *memory.Memory) { m.Scope = memory.ScopePersonal }},
		{"ErrUnknownScope", func(m *memory.Memory) { m.Scope = "global" }},
		{"ErrImportanceOutOfRange", func(m *memory.Memory) { m.Importance = 1.5 }},
		{"ErrSecret", func(m *memory.Memory) { m.Content = "my key is sk-proj-abcdefghijklmnopqrstuvwxyz123456" }},
		{"ErrSecretTag", func(m *memory.Memory) { m.Tags = []string{"wifi", "password=hunter22"} }},
		{"ErrAWSKeyTag", func(m *memory.Memory) { m.Tags = []string{"AKIAIOSFODNN7EXAMPLE"} }},
		{"ErrTokenTag", func(m *memory.Memory) { m.Tags = []string{"hf_FAKEfakeFAKEfake0123456789abcdefgh"} }},
		{"ErrTooManyTags", func(m *memory.Memory) {
			m.Tags = strings.Fields("a b c d e f g h i j k")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := valid()
			c.mutate(&m)
			err := m.Prepare()
			if memory.ErrorCode(err) != memory.EINVALID {
				t.Fatalf("Prepare error = %v, want code %s", err, memory.EINVALID)
			}
			if memory.ErrorMessage(err) == "" {
				t.Error("domain error without a user-facing message")
			}
		})
	}
	t.Run("MaxLengthAccepted", func(t *testing.T) {
		m := valid()
		m.Content = strings.Repeat("あ", memory.MaxContentRunes)
		if err := m.Prepare(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("TagsCleaned", func(t *testing.T) {
		m := valid()
		m.Tags = []string{" Games ", "games", "", "raid"}
		if err := m.Prepare(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(m.Tags, ",") != "games,raid" {
			t.Errorf("tags = %v", m.Tags)
		}
	})
}

func TestOwnerKey(t *testing.T) {
	if memory.ServerOwner("g1").Key() == memory.PersonalOwner("g1").Key() {
		t.Error("server and personal keys collide for the same id")
	}
}

func TestSecrets(t *testing.T) {
	secrets := []string{
		"-----BEGIN RSA PRIVATE KEY-----",
		"token: " + "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456",
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"AKIAABCDEFGHIJKLMNOP",
		"password=hunter22",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	}
	for _, s := range secrets {
		if _, ok := memory.DetectSecret(s); !ok {
			t.Errorf("DetectSecret(%q) = false", s)
		}
		if r := memory.RedactSecrets("before " + s + " after"); strings.Contains(r, s) || !strings.Contains(r, "[redacted") {
			t.Errorf("RedactSecrets left %q in %q", s, r)
		}
	}
	for _, s := range []string{"my password is something I forget", "I prefer green tea", "the token economy of board games"} {
		if kind, ok := memory.DetectSecret(s); ok {
			t.Errorf("DetectSecret(%q) = %s, want none", s, kind)
		}
	}
}

func TestSearchText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Plain ASCII stays as written", "Plain ASCII stays as written"},
		{"ＡＰＩの上限", "api の上限"},
		{"明日のdeployは15時から", "明日の deploy は 15 時から"},
		{"PRを出して", "pr を出して"},
		{"Ｃａｆé au lait", "café au lait"},
		{"東京 2024年", "東京 2024 年"},
		{"緑茶が好き。", "緑茶が好き。"},
		{"", ""},
	} {
		if got := memory.SearchText(tt.in); got != tt.want {
			t.Errorf("SearchText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
