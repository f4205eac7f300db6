package graph

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/memory"
)

// The shapes the store reads and writes the graph in, shared by the store, the pipeline
// that feeds it and the surfaces that show it.

// Node is an entity as the store keeps it.
type Node struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// UserID is the member a person entity is, when known.
	UserID string `json:"user_id,omitempty"`
	// Mentions counts the memories that mention the entity and the mentions of its
	// relations.
	Mentions int `json:"mentions"`
}

// Edge is a relation between two entities of one scope.
type Edge struct {
	Source Node   `json:"source"`
	Target Node   `json:"target"`
	Type   string `json:"type"`
	// Mentions counts how often the relation was extracted; Confidence is the running
	// average of the model's confidence over those mentions.
	Mentions   int     `json:"mentions"`
	Confidence float64 `json:"confidence"`
}

// Neighbourhood is one entity with what surrounds it: the names it goes by, its relations
// and the live memories that mention it.
type Neighbourhood struct {
	Entity    Node     `json:"entity"`
	Aliases   []string `json:"aliases"`
	Relations []Edge   `json:"relations"`
	Memories  []int64  `json:"memories"`
}

// CoMention is an entity that shares memories with another, and how many: the memories
// that mention both, counted among those the asker may see. Node.Mentions is left zero,
// because the entity's stored count covers every memory of the scope, seen or not.
type CoMention struct {
	Node  Node `json:"entity"`
	Count int  `json:"count"`
}

// Triple is one (source, relationship, target) statement the pipeline's extraction found.
type Triple struct {
	Source       string  `json:"source"`
	Relationship string  `json:"relationship"`
	Target       string  `json:"target"`
	Confidence   float64 `json:"confidence"`
}

// Batch is the triples of one extraction, for one scope's graph.
type Batch struct {
	// Owner is the scope of the graph: the conversation's guild, or the member for a DM.
	Owner memory.Owner
	// Triples are the statements to record.
	Triples []Triple
	// People are the conversation's speakers: a triple's name that is one of them is tied
	// to their user id (and dropped when their privacy level keeps them out of the graph).
	People []Person
	// Sources are the user ids whose messages the triples were extracted from; a relation
	// whose only source is a member goes with that member's forget-me.
	Sources []string
	// StartedAt is when the work began: triples of a batch whose speaker was forgotten
	// since are not written (forget-me fences).
	StartedAt time.Time
}

// MaxRelationRunes bounds a relation's type; longer ones are cut.
const MaxRelationRunes = 64

// RelationType returns the stored form of a relationship: lowercase, white space collapsed,
// at most MaxRelationRunes characters.
func RelationType(rel string) string {
	s := strings.ToLower(memory.CollapseSpace(rel))
	if utf8.RuneCountInString(s) <= MaxRelationRunes {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:MaxRelationRunes]))
}

// Named returns the entity a whole name stands for, as an extraction triple names it: a
// member of c when the name is theirs, else what the linker makes of the name (its kind,
// its canonical name) when the name is one entity, else an entity of kind other named as
// written. It returns false for a name that is empty once trimmed.
func Named(name string, c Context) (Entity, bool) {
	name = strings.TrimSpace(memory.CollapseSpace(name))
	if name == "" {
		return Entity{}, false
	}
	if len(name) > 200 {
		name = truncateRunes(name, 200)
	}
	es := Link(name, c)
	if len(es) == 1 && (es[0].UserID != "" || wholeName(es[0], name)) {
		return es[0], true
	}
	if !strings.Contains(name, " ") {
		if has(vocab().firstName, name) {
			return Entity{Name: CanonicalPerson(name), Kind: KindPerson, Surface: name}, true
		}
	}
	return Entity{Name: name, Kind: KindOther, Surface: name}, true
}

// wholeName reports whether e, found in name, is all of it: the name is e's, or e's with a
// word that only says its kind ("Project Falcon", "the Valheim server").
func wholeName(e Entity, name string) bool {
	n := Normalize(name)
	if n == Normalize(e.Name) {
		return true
	}
	surface := Normalize(trimPossessiveSpan(e.Surface))
	if n == surface {
		return true
	}
	rest := strings.TrimSpace(strings.Replace(n, surface, "", 1))
	rest = strings.TrimSpace(strings.TrimPrefix(rest, "the "))
	t := vocab()
	return rest == "" || !strings.Contains(rest, " ") && (t.projectBefore.words[rest] || t.projectAfter.words[rest] ||
		t.gameAfter.words[rest] || t.titleAfter.words[rest])
}

func truncateRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
