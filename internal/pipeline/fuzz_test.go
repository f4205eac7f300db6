package pipeline_test

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

// prose is a line a model may write before its answer. Its letters change length when
// lowercased ("Ⱥ" has two bytes, "ⱥ" three; "İ" two, "i" one), and it holds nothing the
// parsers look for, so it must not change what they read.
const prose = "ȺȺ İ Here is the JSON:\n"

// Model replies the fuzzers start from: well-formed, truncated, wrapped in reasoning and
// fences, and with every kind of field the parsers read.
var extractionSeeds = []string{
	`{"facts":[{"content":"Alice prefers green tea","type":"preference","confidence":0.9,"scope":"personal","subject_id":"u1","evidence":[1,"#2"]},{"content":"Raid night is on Friday","type":"decision","confidence":"0.8","scope":"server","evidence":"3"}],"entities":[{"source":"Alice","relationship":"likes","target":"green tea","confidence":0.7}]}`,
	"<think>{maybe}</think>```json\n" + `{"facts":[{"content":"Bob moved to Osaka last spring","confidence":1,"subject":"<@u2>"}]}` + "\n```",
	`{"facts":[{"content":"Alice prefers green tea","confidence":0.9},{"content":"Bob is lea`,
	`{"facts":{"content":"not an array"},"entities":[1,"x",null,{"source":"a"}]}`,
	`{"FACTS":[{"content":"緑茶が大好きなアリス","confidence":"0.5","scope":"group","evidence":[0,-1,"x",1e99]}]}`,
	`{"facts":[{"content":"The raid password=swordfish123 is new","confidence":1}],"entities":[{"source":"db","relation":"password","target":"DB_PASSWORD=hunter2hunter2"}]}`,
	`{"facts":[{"content":"` + strings.Repeat("long fact ", 201) + `","confidence":1},{"content":"  a   b  "}]}`,
	`reasoning </think> {"facts":[{"content":"Raid night is on Friday","confidence":-1e308,"type":"RUMOUR"}]} trailing }`,
	`{"entities":[{"source":"a","relationship":"b","target":"c","confidence":"Inf"}],"facts":[]}`,
	"", "{", "}", "{}", "[]", "<think>", "```", `{"facts":[{}]}`,
}

// FuzzParseExtraction checks that no model reply makes extraction panic, that a line of
// prose before the reply changes nothing, and that what it keeps respects the limits: at most MaxFacts facts and MaxEntities entities, each fact
// 10–2000 characters of collapsed text with no secret, a known type and scope, a
// confidence in 0–1 and distinct positive record numbers as evidence, no two facts with
// one hash; each entity complete, collapsed, secret-free, with a confidence in 0–1.
func FuzzParseExtraction(f *testing.F) {
	for _, s := range extractionSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		x := pipeline.ParseExtraction(reply)
		if prefixed := pipeline.ParseExtraction(prose + reply); !reflect.DeepEqual(prefixed, x) {
			t.Fatalf("a line of prose before the reply changed the extraction:\n%+v\n%+v", x, prefixed)
		}
		if len(x.Facts) > pipeline.MaxFacts {
			t.Fatalf("%d facts kept, the limit is %d", len(x.Facts), pipeline.MaxFacts)
		}
		if len(x.Entities) > pipeline.MaxEntities {
			t.Fatalf("%d entities kept, the limit is %d", len(x.Entities), pipeline.MaxEntities)
		}
		hashes := map[string]bool{}
		for i, fact := range x.Facts {
			checkContent(t, "fact", fact.Content)
			if !fact.Type.Valid() {
				t.Errorf("fact %d has type %q", i, fact.Type)
			}
			if fact.Scope != memory.ScopeServer && fact.Scope != memory.ScopePersonal {
				t.Errorf("fact %d has scope %q", i, fact.Scope)
			}
			checkConfidence(t, "fact", fact.Confidence)
			seen := map[int]bool{}
			for _, n := range fact.Evidence {
				if n <= 0 || seen[n] {
					t.Errorf("fact %d cites record %d (evidence %v): not a distinct record number", i, n, fact.Evidence)
				}
				seen[n] = true
			}
			if h := memory.Hash(fact.Content); hashes[h] {
				t.Errorf("fact %d repeats an earlier fact: %q", i, fact.Content)
			} else {
				hashes[h] = true
			}
		}
		for i, e := range x.Entities {
			for _, part := range []string{e.Source, e.Relationship, e.Target} {
				if part == "" || part != memory.CollapseSpace(part) {
					t.Errorf("entity %d has an empty or uncollapsed part %q", i, part)
				}
			}
			if kind, ok := memory.DetectSecret(e.Source + "\n" + e.Relationship + "\n" + e.Target); ok {
				t.Errorf("entity %d holds a %s", i, kind)
			}
			checkConfidence(t, "entity", e.Confidence)
		}
	})
}

// FuzzParseDecision checks that no model reply makes the decision stage panic, that a
// line of prose before the reply changes nothing, and that a decision it accepts is one the worker may apply: a known action, a target that is one of
// the candidates shown (required for UPDATE and DELETE, none for ADD), a reason, a
// confidence in 0–1, and content that is the fact's or, for an UPDATE, valid memory text.
func FuzzParseDecision(f *testing.F) {
	for _, s := range []string{
		`{"action":"ADD","target_id":0,"confidence":0.9,"reason":"new"}`,
		`{"action":"update","target_id":"#42","content":"Raid night is Wednesday now","confidence":"0.8","reason":"moved"}`,
		`{"action":"DELETE","target_id":"id:7","confidence":0.95,"reason":"retracted"}`,
		`{"action":"NONE","target_id":99,"confidence":0.9,"reason":"known"}`,
		`{"action":"UPDATE","target_id":-42,"confidence":0.9,"reason":"x"}`,
		`{"action":"DELETE","target_id":9223372036854775808,"confidence":"-0","reason":"x"}`,
		`{"action":"UPDATE","target_id":42,"content":"The raid password=swordfish123","confidence":0.9,"reason":"x"}`,
		`{"action":"UPDATE","target_id":42,"content":{"x":1},"confidence":1e400,"reason":"x"}`,
		"<think>hmm</think>```json\n" + `{"action":" none ","confidence":0.9,"reason":"known"}` + "\n```",
		`{"action":"ADD",`, "ADD it", "",
	} {
		f.Add(s)
	}
	fact := pipeline.Fact{Content: "Raid night moved to Wednesday", Type: memory.TypeDecision, Confidence: 0.9, Scope: memory.ScopeServer}
	cands := []*memory.Memory{
		{ID: 42, Content: "Raid night is Tuesday", UpdatedAt: time.Now()},
		{ID: 7, Content: "Raids start at 8pm", UpdatedAt: time.Now()},
	}
	f.Fuzz(func(t *testing.T, reply string) {
		d := pipeline.ParseDecision(reply, fact, cands)
		if prefixed := pipeline.ParseDecision(prose+reply, fact, cands); !reflect.DeepEqual(prefixed, d) {
			t.Fatalf("a line of prose before the reply changed the decision:\n%+v\n%+v", d, prefixed)
		}
		if !d.ByModel {
			t.Fatalf("a parsed reply is not marked as the model's: %+v", d)
		}
		if d.Invalid != "" {
			return
		}
		switch d.Action {
		case memory.ProposeAdd:
			if d.TargetID != 0 {
				t.Fatalf("ADD names target %d", d.TargetID)
			}
		case memory.ProposeUpdate, memory.ProposeDelete, memory.ProposeNone:
			if d.TargetID == 0 && d.Action != memory.ProposeNone {
				t.Fatalf("%s names no target", d.Action)
			}
		default:
			t.Fatalf("accepted unknown action %q", d.Action)
		}
		if d.TargetID != 0 && !slices.ContainsFunc(cands, func(m *memory.Memory) bool { return m.ID == d.TargetID }) {
			t.Fatalf("%s names memory #%d, which is not a candidate", d.Action, d.TargetID)
		}
		if d.Reason == "" || d.Reason != memory.CollapseSpace(d.Reason) {
			t.Fatalf("reason %q is empty or not collapsed", d.Reason)
		}
		checkConfidence(t, "decision", d.Confidence)
		if d.Action == memory.ProposeUpdate {
			checkContent(t, "UPDATE", d.Content)
		} else if d.Content != fact.Content {
			t.Fatalf("%s carries content %q, want the fact's", d.Action, d.Content)
		}
	})
}

// checkContent fails unless s could be stored as memory content: collapsed, 10–2000
// characters, no secret.
func checkContent(t *testing.T, what, s string) {
	t.Helper()
	if s != memory.CollapseSpace(s) {
		t.Errorf("%s content %q is not collapsed", what, s)
	}
	if n := utf8.RuneCountInString(s); n < pipeline.MinFactRunes || n > pipeline.MaxFactRunes {
		t.Errorf("%s content has %d characters, want %d–%d", what, n, pipeline.MinFactRunes, pipeline.MaxFactRunes)
	}
	if kind, ok := memory.DetectSecret(s); ok {
		t.Errorf("%s content holds a %s: %q", what, kind, s)
	}
}

func checkConfidence(t *testing.T, what string, c float64) {
	t.Helper()
	if math.IsNaN(c) || c < 0 || c > 1 {
		t.Errorf("%s confidence %v is outside 0–1", what, c)
	}
}
