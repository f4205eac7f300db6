package pipeline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kioku-bot/kioku/memory"
)

// Whose memory a fact becomes is decided here, from provenance the model cannot forge:
// the user ids of the records a fact cites. The model's scope label and any name it wrote
// decide nothing (SPEC §2 trust rules):
//
//   - a fact about a member (subject_id names someone who spoke) is that member's personal
//     memory, whatever scope label it carries, and only if it cites at least one message
//     that member wrote: what Bob says about Alice never becomes Alice's memory;
//   - a fact with no member subject is server memory (in a DM, the DM member's);
//   - evidence numbers that name no record, or only the bot's, are dropped; a fact left
//     without evidence is attributed only when one person spoke in the batch;
//   - a subject that is not the id of someone who spoke (a display name, a silent member, a
//     stranger), or a personal fact whose evidence spans several speakers without naming
//     one of them by id, is dropped.

// person is what the worker knows about someone who spoke in a batch.
type person struct {
	id, name string
	privacy  memory.Privacy
}

// attribution is the outcome of attribute for one fact.
type attribution struct {
	// subject is the member the fact is about; nil for a server-wide fact.
	subject *person
	// author is who said it: the subject, or the only speaker of a server fact's evidence.
	author *person
	// evidence are the records the fact is learned from: for a member's fact only that
	// member's own messages, for a server fact every cited message of a person.
	evidence []memory.Turn
	// mayEditServer is set when a speaker of the evidence could change server memory
	// when they spoke.
	mayEditServer bool
}

// batchRecords are the records of one extraction batch: records[n-1] is record n, nil when
// its turn is gone (deleted, or its speaker chose privacy full since the extraction ran).
type batchRecords struct {
	records  []*memory.Turn
	people   map[string]*person
	speakers []*person // people with at least one record, in order of first appearance
}

func newBatchRecords(records []*memory.Turn, people map[string]*person) batchRecords {
	b := batchRecords{records: records, people: people}
	seen := map[string]bool{}
	for _, t := range records {
		if t == nil || t.Role != memory.RoleUser || seen[t.UserID] {
			continue
		}
		seen[t.UserID] = true
		if who := people[t.UserID]; who != nil {
			b.speakers = append(b.speakers, who)
		}
	}
	return b
}

// speaker returns the person with user id id among the batch's speakers.
func (b batchRecords) speaker(id string) *person {
	for _, who := range b.speakers {
		if who.id == id {
			return who
		}
	}
	return nil
}

// userRecords returns the person records of id, or of everyone when id is "".
func (b batchRecords) userRecords(id string) []memory.Turn {
	var out []memory.Turn
	for _, t := range b.records {
		if t != nil && t.Role == memory.RoleUser && (id == "" || t.UserID == id) {
			out = append(out, *t)
		}
	}
	return out
}

// attribute decides whose fact f is. ok is false when it belongs to nobody it may be
// stored for; why says which rule dropped it (it names ids and record numbers, never
// content). warnings report ignored evidence numbers.
func (b batchRecords) attribute(f Fact, dm bool) (att attribution, warnings []string, why string, ok bool) {
	var cited []memory.Turn
	for _, n := range f.Evidence {
		switch {
		case n < 1 || n > len(b.records) || b.records[n-1] == nil:
			warnings = append(warnings, fmt.Sprintf("evidence record %d does not exist; ignored", n))
		case b.records[n-1].Role != memory.RoleUser:
			warnings = append(warnings, fmt.Sprintf("evidence record %d is the bot's; ignored", n))
		default:
			cited = append(cited, *b.records[n-1])
		}
	}
	var citedSpeakers []string
	for _, t := range cited {
		if !slices.Contains(citedSpeakers, t.UserID) {
			citedSpeakers = append(citedSpeakers, t.UserID)
		}
	}

	var subject *person
	id, kind := subjectID(f.SubjectID)
	if kind == subjectNamed {
		if subject = b.speaker(id); subject == nil {
			return att, warnings, "subject is none of the people who spoke", false
		}
	}
	personal := dm || subject != nil || kind == subjectSpeaker || f.Scope == memory.ScopePersonal
	switch {
	case len(cited) == 0:
		if len(b.speakers) != 1 {
			return att, warnings, "no valid evidence and several people spoke", false
		}
		// One person spoke: whatever the fact says, it can only come from them.
		if personal {
			subject = b.speakers[0]
		}
		cited = b.userRecords(b.speakers[0].id)
		citedSpeakers = []string{b.speakers[0].id}
	case subject != nil:
		if !slices.Contains(citedSpeakers, subject.id) {
			return att, warnings, fmt.Sprintf("cites no message of its subject %s", subject.id), false
		}
	case personal:
		if len(citedSpeakers) != 1 {
			return att, warnings, "personal fact with evidence from several people and no subject id", false
		}
		subject = b.speaker(citedSpeakers[0])
	}

	att.subject = subject
	if subject != nil {
		// A member's memory rests on their own words only: the links that decide what
		// happens when a message is deleted or its author is forgotten name just theirs.
		for _, t := range cited {
			if t.UserID == subject.id {
				att.evidence = append(att.evidence, t)
			}
		}
		att.author = subject
	} else {
		att.evidence = cited
		if len(citedSpeakers) == 1 {
			att.author = b.speaker(citedSpeakers[0])
		}
	}
	for _, t := range att.evidence {
		att.mayEditServer = att.mayEditServer || t.CanEditServer
	}
	return att, warnings, "", true
}

// What a fact's subject_id says.
const (
	subjectNone    = iota // no member: a server-wide fact
	subjectSpeaker        // "I", "me": the person who said it, found from the evidence
	subjectNamed          // a user id (anything else, names included, is looked up as one)
)

// subjectID reads the subject the model gave: a user id ("u1", "<@u1>", "<@!u1>", "@u1"),
// nothing, or a first-person word. Everything else is returned as an id to look up, so a
// display name matches nobody.
func subjectID(s string) (id string, kind int) {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "<@"), "!"), ">")
	s = strings.TrimSpace(strings.TrimPrefix(s, "@"))
	switch strings.ToLower(s) {
	case "", "none", "null", "server", "everyone", "group", "-":
		return "", subjectNone
	case "i", "me", "myself", "speaker", "the speaker":
		return "", subjectSpeaker
	}
	return s, subjectNamed
}

// evidenceOf turns an attribution's records into the store's evidence links.
func evidenceOf(turns []memory.Turn) []memory.MessageRef {
	out := make([]memory.MessageRef, 0, len(turns))
	for _, t := range turns {
		msg := t.MessageID
		if msg == "" {
			msg = "turn:" + strconv.FormatInt(t.ID, 10)
		}
		out = append(out, memory.MessageRef{MessageID: msg, AuthorID: t.UserID})
	}
	return out
}

func turnIDs(turns []memory.Turn) []int64 {
	ids := make([]int64, len(turns))
	for i, t := range turns {
		ids[i] = t.ID
	}
	return ids
}

// recordsByID rebuilds a checkpoint's records from the turns read now: a turn that is gone,
// or whose speaker has since chosen privacy full, leaves its record empty.
func recordsByID(ids []int64, turns []memory.Turn, people map[string]*person) []*memory.Turn {
	byID := make(map[int64]*memory.Turn, len(turns))
	for i := range turns {
		byID[turns[i].ID] = &turns[i]
	}
	out := make([]*memory.Turn, len(ids))
	for i, id := range ids {
		t := byID[id]
		if t == nil {
			continue
		}
		if who := people[t.UserID]; who != nil && who.privacy == memory.PrivacyFull {
			continue
		}
		out[i] = t
	}
	return out
}
