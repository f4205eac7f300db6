package pipeline_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kioku-bot/kioku/internal/pipeline"
	"github.com/kioku-bot/kioku/memory"
)

func TestParseExtraction(t *testing.T) {
	tea := pipeline.Fact{Content: "Alice prefers green tea", Type: memory.TypePreference, Confidence: 0.9, Scope: memory.ScopePersonal, SubjectID: "u1"}
	raid := pipeline.Fact{Content: "Raid night is on Friday", Type: memory.TypeDecision, Confidence: 0.8, Scope: memory.ScopeServer}
	const teaJSON = `{"content":"Alice prefers green tea","type":"preference","confidence":0.9,"scope":"personal","subject":"u1"}`
	const raidJSON = `{"content":"Raid night is on Friday","type":"decision","confidence":0.8,"scope":"server"}`
	many := make([]string, 25)
	for i := range many {
		many[i] = fmt.Sprintf(`{"content":"Numbered fact number %d","confidence":0.9,"scope":"server"}`, i)
	}
	entities := make([]string, 55)
	for i := range entities {
		entities[i] = fmt.Sprintf(`{"source":"a%d","relationship":"likes","target":"b"}`, i)
	}
	tests := []struct {
		name     string
		reply    string
		facts    []pipeline.Fact
		entities int
		warnings []string // substrings, one per expected warning, in order
	}{
		{name: "Valid", reply: `{"facts":[` + teaJSON + `,` + raidJSON + `],"entities":[{"source":"Alice","relationship":"likes","target":"green tea","confidence":0.7}]}`,
			facts: []pipeline.Fact{tea, raid}, entities: 1},
		{name: "EmptyIsFine", reply: `{"facts":[],"entities":[]}`},
		{name: "ThinkBlockStripped", reply: "<think>They talk about {tea}. Maybe {\"facts\":[]}</think>\n" + `{"facts":[` + teaJSON + `]}`,
			facts: []pipeline.Fact{tea}},
		{name: "UnclosedThinkLeavesNothing", reply: `<think>{"facts":[` + teaJSON + `]}`, warnings: []string{"no JSON object"}},
		{name: "LoneClosingThink", reply: `reasoning here </THINK>{"facts":[` + teaJSON + `]}`, facts: []pipeline.Fact{tea}},
		{name: "CodeFenceStripped", reply: "```json\n" + `{"facts":[` + teaJSON + `]}` + "\n```", facts: []pipeline.Fact{tea}},
		{name: "ProseAround", reply: "Here you go:\n" + `{"facts":[` + raidJSON + `]}` + "\nHope this helps {:", facts: []pipeline.Fact{raid}},
		{name: "NoJSON", reply: "I could not find anything.", warnings: []string{"no JSON object"}},
		{name: "TruncatedKeepsCompleteFacts", reply: `{"facts":[` + teaJSON + `,` + raidJSON + `,{"content":"Bob is lea`,
			facts: []pipeline.Fact{tea, raid}, warnings: []string{"malformed JSON (kept the 2 facts"}},
		{name: "SyntaxErrorMidway", reply: `{"facts":[` + teaJSON + `,{"content": oops}]}`,
			facts: []pipeline.Fact{tea}, warnings: []string{"malformed JSON"}},
		{name: "FactsNotAnArray", reply: `{"facts":{"content":"Alice prefers green tea"}}`, warnings: []string{`"facts" is not an array`}},
		{name: "NoFactsKey", reply: `{"memories":[` + teaJSON + `]}`, warnings: []string{"no facts array"}},
		{name: "TooShort", reply: `{"facts":[{"content":"ok sure","confidence":1}]}`, warnings: []string{"shorter than 10"}},
		{name: "TooLong", reply: `{"facts":[{"content":"` + strings.Repeat("a", 2001) + `","confidence":1}]}`, warnings: []string{"longer than 2000"}},
		{name: "ExactlyTenRunes", reply: `{"facts":[{"content":"緑茶が大好きなアリス","confidence":1,"scope":"server"}]}`,
			facts: []pipeline.Fact{{Content: "緑茶が大好きなアリス", Type: memory.TypeFact, Confidence: 1, Scope: memory.ScopeServer}}},
		{name: "WhitespaceCollapsedBeforeLength", reply: `{"facts":[{"content":"  a   b  ","confidence":1}]}`, warnings: []string{"shorter"}},
		{name: "UnknownTypeBecomesFact", reply: `{"facts":[{"content":"Raid night is on Friday","type":"rumour","confidence":0.8,"scope":"server"}]}`,
			facts:    []pipeline.Fact{{Content: "Raid night is on Friday", Type: memory.TypeFact, Confidence: 0.8, Scope: memory.ScopeServer}},
			warnings: []string{`unknown type (6 characters)`}},
		{name: "TypeCaseInsensitive", reply: `{"facts":[{"content":"Raid night is on Friday","type":"DECISION","confidence":0.8,"scope":"server"}]}`,
			facts: []pipeline.Fact{raid}},
		{name: "MissingConfidenceIsZero", reply: `{"facts":[{"content":"Raid night is on Friday","type":"decision","scope":"server"}]}`,
			facts:    []pipeline.Fact{{Content: "Raid night is on Friday", Type: memory.TypeDecision, Scope: memory.ScopeServer}},
			warnings: []string{"no confidence"}},
		{name: "ConfidenceAsString", reply: `{"facts":[{"content":"Raid night is on Friday","type":"decision","confidence":"0.8","scope":"server"}]}`,
			facts: []pipeline.Fact{raid}},
		{name: "ConfidenceClamped", reply: `{"facts":[{"content":"Raid night is on Friday","type":"decision","confidence":7,"scope":"server"}]}`,
			facts:    []pipeline.Fact{{Content: "Raid night is on Friday", Type: memory.TypeDecision, Confidence: 1, Scope: memory.ScopeServer}},
			warnings: []string{"outside 0–1"}},
		{name: "ScopeAliasesAndNumericSubject", reply: `{"facts":[{"content":"Alice prefers green tea","type":"preference","confidence":0.9,"scope":"target_user","subject":42},{"content":"Raid night is on Friday","type":"decision","confidence":0.8,"scope":"server_wide"}]}`,
			facts: []pipeline.Fact{{Content: "Alice prefers green tea", Type: memory.TypePreference, Confidence: 0.9, Scope: memory.ScopePersonal, SubjectID: "42"}, raid}},
		{name: "ScopeInferredFromSubject", reply: `{"facts":[{"content":"Alice prefers green tea","type":"preference","confidence":0.9,"subject":"u1"},{"content":"Raid night is on Friday","type":"decision","confidence":0.8,"scope":"everyone"}]}`,
			facts: []pipeline.Fact{tea, raid}, warnings: []string{`unknown scope (8 characters)`}},
		{name: "SubjectIDAndEvidence", reply: `{"facts":[{"content":"Alice prefers green tea","type":"preference","confidence":0.9,"scope":"personal","subject_id":"<@u1>","evidence":[1,"#2","x",0,2]},{"content":"Raid night is on Friday","type":"decision","confidence":0.8,"scope":"server","evidence":"3"}]}`,
			facts: []pipeline.Fact{{Content: "Alice prefers green tea", Type: memory.TypePreference, Confidence: 0.9, Scope: memory.ScopePersonal, SubjectID: "<@u1>", Evidence: []int{1, 2}},
				{Content: "Raid night is on Friday", Type: memory.TypeDecision, Confidence: 0.8, Scope: memory.ScopeServer, Evidence: []int{3}}},
			warnings: []string{"fact 0 cites evidence that is not a record number", "fact 0 cites evidence that is not a record number"}},
		{name: "ContentNotText", reply: `{"facts":[{"content":{"x":1},"confidence":1},"just a string"]}`,
			warnings: []string{"fact 0 has no text content", "fact 1 is not an object"}},
		{name: "SecretDropped", reply: `{"facts":[{"content":"Alice's password=hunter2hunter2 for the wiki","confidence":1}]}`,
			warnings: []string{"looks like a secret"}},
		{name: "SecretEnvPasswordAndKeyBodyDropped", reply: `{"facts":[{"content":"Staging uses DB_PASSWORD=hunter2hunter2","confidence":1},{"content":"The deploy key is -----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaFAKE","confidence":1},{"content":"The API needs Authorization: Bearer FAKEbearer0123456789abc","confidence":1}]}`,
			warnings: []string{"fact 0 looks like a secret (password)", "fact 1 looks like a secret (private key)", "fact 2 looks like a secret (bearer token)"}},
		{name: "SecretEntityDropped", reply: `{"facts":[],"entities":[{"source":"staging db","relationship":"has password","target":"DB_PASSWORD=hunter2hunter2"}]}`,
			warnings: []string{"entity 0 looks like a secret"}},
		{name: "DuplicateFactDropped", reply: `{"facts":[` + raidJSON + `,{"content":"raid night is on friday.","confidence":0.8,"scope":"server"}]}`,
			facts: []pipeline.Fact{raid}, warnings: []string{"repeats an earlier fact"}},
		{name: "AtMostTwentyFacts", reply: `{"facts":[` + strings.Join(many, ",") + `]}`, warnings: []string{"5 facts over the limit of 20"}},
		{name: "AtMostFiftyEntities", reply: `{"facts":[],"entities":[` + strings.Join(entities, ",") + `,{"source":"x"}]}`,
			entities: 50, warnings: []string{"entity 55 needs a source", "5 entities over the limit of 50"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := pipeline.ParseExtraction(tc.reply)
			if tc.name == "AtMostTwentyFacts" {
				if len(x.Facts) != pipeline.MaxFacts || x.Facts[19].Content != "Numbered fact number 19" {
					t.Fatalf("kept %d facts, want the first %d", len(x.Facts), pipeline.MaxFacts)
				}
			} else if diff := cmp.Diff(tc.facts, x.Facts); diff != "" {
				t.Errorf("facts (-want +got):\n%s", diff)
			}
			if len(x.Entities) != tc.entities {
				t.Errorf("%d entities, want %d", len(x.Entities), tc.entities)
			}
			if len(x.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d like %q", x.Warnings, len(tc.warnings), tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.Contains(x.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to mention %q", i, x.Warnings[i], w)
				}
			}
		})
	}
}

func TestParseDecision(t *testing.T) {
	f := pipeline.Fact{Content: "Raid night moved to Wednesday", Type: memory.TypeDecision, Confidence: 0.9, Scope: memory.ScopeServer}
	cands := []*memory.Memory{
		{ID: 42, Content: "Raid night is Tuesday", UpdatedAt: time.Now()},
		{ID: 7, Content: "Raids start at 8pm", UpdatedAt: time.Now()},
	}
	tests := []struct {
		name    string
		reply   string
		want    pipeline.Decision // compared without Warnings and ByModel
		invalid string            // substring of Invalid; "" means valid
		warns   int
	}{
		{name: "Add", reply: `{"action":"ADD","target_id":0,"confidence":0.9,"reason":"new"}`,
			want: pipeline.Decision{Action: memory.ProposeAdd, Content: f.Content, Confidence: 0.9, Reason: "new"}},
		{name: "AddIgnoresItsContent", reply: `{"action":"ADD","content":"something else entirely","confidence":0.9,"reason":"new"}`,
			want: pipeline.Decision{Action: memory.ProposeAdd, Content: f.Content, Confidence: 0.9, Reason: "new"}},
		{name: "UpdateWithContent", reply: `{"action":"UPDATE","target_id":42,"content":"Raid night is Wednesday now","confidence":0.8,"reason":"moved"}`,
			want: pipeline.Decision{Action: memory.ProposeUpdate, TargetID: 42, Content: "Raid night is Wednesday now", Confidence: 0.8, Reason: "moved"}},
		{name: "UpdateWithoutContentUsesTheFact", reply: `{"action":"update","target_id":"#42","confidence":0.8,"reason":"moved"}`,
			want: pipeline.Decision{Action: memory.ProposeUpdate, TargetID: 42, Content: f.Content, Confidence: 0.8, Reason: "moved"}},
		{name: "Delete", reply: `{"action":"DELETE","target_id":"id:7","confidence":0.95,"reason":"retracted"}`,
			want: pipeline.Decision{Action: memory.ProposeDelete, TargetID: 7, Content: f.Content, Confidence: 0.95, Reason: "retracted"}},
		{name: "None", reply: `{"action":"NONE","target_id":42,"confidence":0.9,"reason":"known"}`,
			want: pipeline.Decision{Action: memory.ProposeNone, TargetID: 42, Content: f.Content, Confidence: 0.9, Reason: "known"}},
		{name: "ThinkAndFence", reply: "<think>hmm</think>```json\n" + `{"action":"NONE","confidence":0.9,"reason":"known"}` + "\n```",
			want: pipeline.Decision{Action: memory.ProposeNone, Content: f.Content, Confidence: 0.9, Reason: "known"}},
		{name: "UpdateHallucinatedID", reply: `{"action":"UPDATE","target_id":99,"confidence":0.9,"reason":"x"}`, invalid: "#99, which is not one of the candidates"},
		{name: "DeleteHallucinatedID", reply: `{"action":"DELETE","target_id":"1000","confidence":0.9,"reason":"x"}`, invalid: "not one of the candidates"},
		{name: "NoneHallucinatedIDIsIgnored", reply: `{"action":"NONE","target_id":99,"confidence":0.9,"reason":"known"}`,
			want: pipeline.Decision{Action: memory.ProposeNone, Content: f.Content, Confidence: 0.9, Reason: "known"}, warns: 1},
		{name: "UpdateWithoutTarget", reply: `{"action":"UPDATE","confidence":0.9,"reason":"x"}`, invalid: "names no target"},
		{name: "DeleteTargetNotAnID", reply: `{"action":"DELETE","target_id":"the tuesday one","confidence":0.9,"reason":"x"}`, invalid: "not an id"},
		{name: "EmptyReason", reply: `{"action":"ADD","confidence":0.9,"reason":"  "}`, invalid: "no reason"},
		{name: "MissingReason", reply: `{"action":"DELETE","target_id":42,"confidence":0.9}`, invalid: "no reason"},
		{name: "UnknownAction", reply: `{"action":"MERGE","target_id":42,"confidence":0.9,"reason":"x"}`, invalid: `unknown action (5 characters)`},
		{name: "EmptyUpdateIsNotADelete", reply: `{"action":"UPDATE","target_id":42,"content":"","confidence":0.9,"reason":"x"}`, invalid: "empty content"},
		{name: "UpdateTooShort", reply: `{"action":"UPDATE","target_id":42,"content":"Wed","confidence":0.9,"reason":"x"}`, invalid: "10–2000"},
		{name: "UpdateSecret", reply: `{"action":"UPDATE","target_id":42,"content":"The raid password=swordfish123","confidence":0.9,"reason":"x"}`, invalid: "secret"},
		{name: "Malformed", reply: `{"action":"ADD",`, invalid: "malformed JSON"},
		{name: "NoJSON", reply: `ADD it`, invalid: "no JSON object"},
		{name: "MissingConfidenceIsZero", reply: `{"action":"ADD","reason":"new"}`,
			want: pipeline.Decision{Action: memory.ProposeAdd, Content: f.Content, Reason: "new"}, warns: 1},
		{name: "ConfidenceClamped", reply: `{"action":"ADD","confidence":-3,"reason":"new"}`,
			want: pipeline.Decision{Action: memory.ProposeAdd, Content: f.Content, Reason: "new"}, warns: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := pipeline.ParseDecision(tc.reply, f, cands)
			if tc.invalid != "" {
				if !strings.Contains(d.Invalid, tc.invalid) {
					t.Fatalf("Invalid = %q, want it to mention %q", d.Invalid, tc.invalid)
				}
				return
			}
			if d.Invalid != "" {
				t.Fatalf("unexpectedly invalid: %s", d.Invalid)
			}
			if !d.ByModel || len(d.Warnings) != tc.warns {
				t.Errorf("ByModel %v, warnings %q (want %d)", d.ByModel, d.Warnings, tc.warns)
			}
			d.Warnings, d.ByModel = nil, false
			if diff := cmp.Diff(tc.want, d); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFlagsMode(t *testing.T) {
	def := pipeline.DefaultFlags()
	tests := []struct {
		name  string
		flags pipeline.Flags
		want  memory.PipelineMode
	}{
		{"Default", def, memory.PipelineFull},
		{"Disabled", pipeline.Flags{AllowUpdateDelete: true}, memory.PipelineOff},
		{"Shadow", pipeline.Flags{Enabled: true, ShadowMode: true, AllowUpdateDelete: true}, memory.PipelineShadow},
		{"NoUpdateDelete", pipeline.Flags{Enabled: true}, memory.PipelineControlled},
		{"MutationsFrozen", pipeline.Flags{Enabled: true, AllowUpdateDelete: true, MutationsFrozen: true}, memory.PipelineControlled},
		{"AutonomousFrozenBeatsShadow", pipeline.Flags{Enabled: true, ShadowMode: true, AutonomousFrozen: true}, memory.PipelineFrozen},
		{"DisabledBeatsEverything", pipeline.Flags{ShadowMode: true, AutonomousFrozen: true}, memory.PipelineOff},
		{"GuildFull", pipeline.ModeFlags(memory.PipelineFull), memory.PipelineFull},
		{"GuildEmpty", pipeline.ModeFlags(""), memory.PipelineFull},
		{"GuildControlled", pipeline.ModeFlags(memory.PipelineControlled), memory.PipelineControlled},
		{"GuildShadow", pipeline.ModeFlags(memory.PipelineShadow), memory.PipelineShadow},
		{"GuildOff", pipeline.ModeFlags(memory.PipelineOff), memory.PipelineOff},
		{"OperatorControlledGuildFull", pipeline.Flags{Enabled: true}.And(pipeline.ModeFlags(memory.PipelineFull)), memory.PipelineControlled},
		{"OperatorFullGuildShadow", def.And(pipeline.ModeFlags(memory.PipelineShadow)), memory.PipelineShadow},
		{"OperatorFrozenGuildFull", pipeline.Flags{Enabled: true, AllowUpdateDelete: true, AutonomousFrozen: true}.And(def), memory.PipelineFrozen},
	}
	for _, tc := range tests {
		if got := tc.flags.Mode(); got != tc.want {
			t.Errorf("%s: %+v → %s, want %s", tc.name, tc.flags, got, tc.want)
		}
	}
}
