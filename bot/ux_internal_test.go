package bot

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/kioku-bot/kioku/memory"
)

func TestFitEmbedKeepsDiscordsLimits(t *testing.T) {
	e := &discordgo.MessageEmbed{Title: strings.Repeat("t", 300), Description: strings.Repeat("記", 5000)}
	for range 40 {
		e.Fields = append(e.Fields, &discordgo.MessageEmbedField{Name: "name", Value: strings.Repeat("v", 2000)})
	}
	fitMemoryEmbed(e)
	if len(e.Fields) > limEmbedFields {
		t.Errorf("%d fields", len(e.Fields))
	}
	if n := memoryEmbedChars(e); n > limEmbedChars {
		t.Errorf("%d characters", n)
	}
	if utf8.RuneCountInString(e.Title) > limEmbedTitle || utf8.RuneCountInString(e.Description) > limEmbedDesc || !utf8.ValidString(e.Description) {
		t.Errorf("title %d, description %d characters", utf8.RuneCountInString(e.Title), utf8.RuneCountInString(e.Description))
	}
	for _, f := range e.Fields {
		if utf8.RuneCountInString(f.Value) > maxEmbedField {
			t.Errorf("field of %d characters", utf8.RuneCountInString(f.Value))
		}
	}
	// What fits is left alone.
	small := &discordgo.MessageEmbed{Title: "a", Description: "b", Fields: []*discordgo.MessageEmbedField{{Name: "c", Value: "d"}}}
	fitMemoryEmbed(small)
	if small.Title != "a" || small.Description != "b" || len(small.Fields) != 1 {
		t.Errorf("a small embed changed: %+v", small)
	}
}

func TestChoiceNameCutsOnCharacters(t *testing.T) {
	for _, content := range []string{"short", strings.Repeat("あ", 200), strings.Repeat("🎉", 150), "line\none\ttwo"} {
		name := choiceName(&memory.Memory{ID: 1234567, Content: content})
		if n := utf8.RuneCountInString(name); n > limChoiceName || n == 0 || !utf8.ValidString(name) || strings.ContainsAny(name, "\n\t") {
			t.Errorf("choice name for %.20q: %d characters, %q", content, n, name)
		}
	}
}

// FuzzParseRef checks that a notice custom ID is read strictly: what parses renders back
// to exactly the same ID, so no other shape is ever acted on.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"kioku:undo:s:42:3", "kioku:edit:p:1:1", "kioku:editm:s:9:9", "kioku:undo:s:042:3",
		"kioku:undo:s:42:3:x", "kioku:undo:p:-1:1", "kioku:undo:s:9223372036854775807:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		for _, prefix := range []string{idUndo, idEdit, idEditModal} {
			ref, ok := parseRef(id, prefix)
			if !ok {
				continue
			}
			if ref.id <= 0 || ref.version <= 0 {
				t.Fatalf("%q parsed to %+v", id, ref)
			}
			if back := refID(prefix, ref); back != id {
				t.Fatalf("%q parsed to %+v, which renders as %q", id, ref, back)
			}
			if utf8.RuneCountInString(id) > limCustomID {
				t.Fatalf("%q is longer than a custom ID may be", id)
			}
		}
	})
}

func TestListIDFitsWithLongestFilters(t *testing.T) {
	f := listFilters{typ: memory.TypeProcedural, tag: strings.Repeat("長", maxTagFilter), author: "12345678901234567890",
		timing: memory.TimingUpcoming}
	id := listID("n", memory.ScopePersonal, 99999, f)
	if n := utf8.RuneCountInString(id); n > limCustomID {
		t.Errorf("page button id of %d characters: %q", n, id)
	}
	if listPattern.FindStringSubmatch(id) == nil {
		t.Errorf("page button id %q does not parse", id)
	}
}
