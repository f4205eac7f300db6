package maintenance_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kioku-bot/kioku/memory/maintenance"
)

var at = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// healthy is a store with nothing wrong: 200 live memories, every index complete.
func healthy() maintenance.Diagnostics {
	return maintenance.Diagnostics{
		At:      at,
		Queue:   maintenance.Queue{Window: 24 * time.Hour, FinishedRecent: 40},
		Storage: maintenance.Storage{Live: 200, Forgotten: 10, FileBytes: 8 << 20, AutoVacuum: "none"},
		Index: maintenance.Index{Live: 200, Words: maintenance.IndexSync{Table: "memories_fts", Rows: 200},
			Trigrams: maintenance.IndexSync{Table: "memories_tri", Rows: 200}},
		Mutations: maintenance.Mutations{Window: 24 * time.Hour},
	}
}

func TestAssessScores(t *testing.T) {
	type want struct {
		score   int
		status  maintenance.Status
		domains map[string]int // only the domains named are checked
		actions []maintenance.Action
		fixes   []string // each must be the fix of some finding
	}
	cases := []struct {
		name   string
		change func(d *maintenance.Diagnostics)
		want   want
	}{
		{"Healthy", func(*maintenance.Diagnostics) {},
			want{score: 100, status: maintenance.StatusHealthy, domains: map[string]int{"queue": 100, "index": 100}}},
		{"OneDeadJobIsAWarningNotAnOutage", func(d *maintenance.Diagnostics) {
			// 1 dead of 1 finished: the rate is taken over at least 20 jobs (5 %).
			d.Queue = maintenance.Queue{Dead: 1, Requeueable: 1, NewestDead: 7, DeadRecent: 1, FinishedRecent: 1, Window: 24 * time.Hour}
		}, want{score: 96, status: maintenance.StatusHealthy, domains: map[string]int{"queue": 85},
			actions: []maintenance.Action{maintenance.ActionRequeueDead}, fixes: []string{"kioku jobs requeue 7"}}},
		{"MostJobsDyingAndStaleLeases", func(d *maintenance.Diagnostics) {
			d.Queue = maintenance.Queue{Dead: 30, Requeueable: 30, NewestDead: 99, DeadRecent: 30, FinishedRecent: 40, Stale: 2, Window: 24 * time.Hour}
		}, // queue 100-50-20 = 30; mean (30·25+100·60)/85 = 79.4; cap 30+30 = 60
			want{score: 60, status: maintenance.StatusDegraded, domains: map[string]int{"queue": 30},
				actions: []maintenance.Action{maintenance.ActionReapStale, maintenance.ActionRequeueDead}, fixes: []string{"kioku jobs requeue 99", "kioku run"}}},
		{"WordIndexBroken", func(d *maintenance.Diagnostics) {
			d.Index.Words = maintenance.IndexSync{Table: "memories_fts", Rows: 150, Missing: 50}
		}, // index 40; mean (40·30+100·55)/85 = 78.8 → 79; cap 70
			want{score: 70, status: maintenance.StatusDegraded, domains: map[string]int{"index": 40},
				actions: []maintenance.Action{maintenance.ActionReindex}, fixes: []string{"kioku reindex"}}},
		{"BothIndexesBrokenIsUnhealthy", func(d *maintenance.Diagnostics) {
			d.Index.Words = maintenance.IndexSync{Table: "memories_fts", Rows: 150, Missing: 50}
			d.Index.Trigrams = maintenance.IndexSync{Table: "memories_tri", Rows: 230, Extra: 30}
		}, want{score: 30, status: maintenance.StatusUnhealthy, domains: map[string]int{"index": 0},
			actions: []maintenance.Action{maintenance.ActionReindex}}},
		{"FewStaleIndexEntriesAreAWarning", func(d *maintenance.Diagnostics) {
			d.Index.Trigrams = maintenance.IndexSync{Table: "memories_tri", Rows: 202, Extra: 2}
		}, // index 70; mean (70·30+100·55)/85 = 89.4
			want{score: 89, status: maintenance.StatusHealthy, domains: map[string]int{"index": 70},
				actions: []maintenance.Action{maintenance.ActionReindex}}},
		{"EmbeddingsHalfMissing", func(d *maintenance.Diagnostics) {
			d.Index.EmbedModel, d.Index.Embedded, d.Index.Vectors = "e", 90, 90
		}, // index 60 (45 % covered); mean (60·30+100·55)/85 = 85.9
			want{score: 86, status: maintenance.StatusHealthy, domains: map[string]int{"index": 60},
				actions: []maintenance.Action{maintenance.ActionEmbedMissing}}},
		{"NoEmbedRepairWhileTheProviderIsDown", func(d *maintenance.Diagnostics) {
			d.Index.EmbedModel, d.Index.Embedded = "e", 190
			d.Provider = maintenance.Provider{Known: true, Calls: 10, EmbedDown: true, Window: time.Hour}
		}, // index 95 (95 % covered), provider 70: mean (95·30+70·15+100·55)/100 = 94
			want{score: 94, status: maintenance.StatusHealthy, domains: map[string]int{"index": 95, "provider": 70}}},
		{"ProviderFailingBlocksRequeue", func(d *maintenance.Diagnostics) {
			d.Queue = maintenance.Queue{Dead: 5, Requeueable: 5, NewestDead: 3, DeadRecent: 5, FinishedRecent: 50, Window: 24 * time.Hour}
			d.Provider = maintenance.Provider{Known: true, Calls: 20, Errors: 15, Window: time.Hour}
		}, // queue 85, provider 40: mean (85·25+100·45+40·15+100·15)/100 = 88.25; cap 70
			want{score: 70, status: maintenance.StatusDegraded, domains: map[string]int{"queue": 85, "provider": 40}}},
		{"ExpiredTombstonesAndFreePages", func(d *maintenance.Diagnostics) {
			d.Storage = maintenance.Storage{Live: 100, Forgotten: 400, ExpiredTombstones: 300, FileBytes: 200 << 20, FreeBytes: 80 << 20, AutoVacuum: "none"}
		}, // storage 100-15-15-10 = 60; mean (60·15+100·70)/85 = 92.9
			want{score: 90, status: maintenance.StatusHealthy, domains: map[string]int{"storage": 60},
				actions: []maintenance.Action{maintenance.ActionRetention, maintenance.ActionVacuum}}},
		{"FullAutoVacuumNeverVacuums", func(d *maintenance.Diagnostics) {
			d.Storage.FileBytes, d.Storage.FreeBytes, d.Storage.AutoVacuum = 200<<20, 150<<20, "full"
		}, want{score: 100, status: maintenance.StatusHealthy}},
		{"PendingMigration", func(d *maintenance.Diagnostics) {
			d.Storage.PendingMigrations = []string{"0008_maintenance.sql"}
		}, // storage 60; mean (60·15+100·70)/85 = 92.9; cap 90
			want{score: 90, status: maintenance.StatusHealthy, domains: map[string]int{"storage": 60}, fixes: []string{"kioku migrate"}}},
		{"ReviewsAndRecoveries", func(d *maintenance.Diagnostics) {
			d.Mutations = maintenance.Mutations{Window: 24 * time.Hour, Reviews: 2, Recoveries: 4, Deletes: 10,
				NewestReview: maintenance.MemoryRef{ID: 42, ScopeKey: "g:555"}}
		}, want{score: 95, status: maintenance.StatusHealthy, domains: map[string]int{"mutations": 70},
			fixes: []string{"kioku memories history 42 --guild 555", "KIOKU_PIPELINE_MODE=controlled kioku run"}}},
		{"DueJobWaitingLong", func(d *maintenance.Diagnostics) {
			d.Queue.Due, d.Queue.Depth, d.Queue.OldestDue = 3, 3, at.Add(-7*time.Hour)
		}, want{score: 88, status: maintenance.StatusHealthy, domains: map[string]int{"queue": 60}}},
		{"DueJobNotLateYet", func(d *maintenance.Diagnostics) {
			d.Queue.Due, d.Queue.Depth, d.Queue.OldestDue = 3, 3, at.Add(-30*time.Minute)
		}, want{score: 100, status: maintenance.StatusHealthy}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := healthy()
			c.change(&d)
			r := maintenance.Assess(d)
			if r.Score != c.want.score || r.Status != c.want.status {
				t.Errorf("score %d (%s), want %d (%s); domains %+v findings %+v", r.Score, r.Status, c.want.score, c.want.status, r.Domains, r.Findings)
			}
			for name, want := range c.want.domains {
				if got, _ := r.Domain(name); got != want {
					t.Errorf("domain %s = %d, want %d", name, got, want)
				}
			}
			if got := r.Actions(); !slices.Equal(got, c.want.actions) {
				t.Errorf("actions %v, want %v", got, c.want.actions)
			}
			for _, fix := range c.want.fixes {
				if !slices.ContainsFunc(r.Findings, func(f maintenance.Finding) bool { return f.Fix == fix }) {
					t.Errorf("no finding with fix %q in %+v", fix, r.Findings)
				}
			}
			for _, f := range r.Findings {
				if f.Fix == "" || f.Detail == "" || f.Domain == "" {
					t.Errorf("finding without fix, detail or domain: %+v", f)
				}
			}
		})
	}
}

// The provider is not known outside the process that calls it: doctor leaves it out of
// the composite instead of guessing.
func TestAssessUnknownProviderCountsForNothing(t *testing.T) {
	d := healthy()
	d.Provider = maintenance.Provider{Known: false, Calls: 100, Errors: 100}
	r := maintenance.Assess(d)
	if score, known := r.Domain("provider"); known || r.Score != 100 {
		t.Fatalf("provider %d known=%v, composite %d: want unknown and 100", score, known, r.Score)
	}
	if len(r.Findings) != 0 {
		t.Fatalf("findings about an unknown provider: %+v", r.Findings)
	}
}

// Findings come most serious first; a halted self-repair is reported with the restart fix.
func TestAssessOrdersFindingsAndReportsHalt(t *testing.T) {
	d := healthy()
	d.Storage.Forgotten = 300                                                  // info: 60 % forgotten
	d.Index.Words = maintenance.IndexSync{Table: "memories_fts", Missing: 100} // critical
	d.Queue = maintenance.Queue{Stale: 1}                                      // warn
	d.Repairs = maintenance.RepairState{LastRunAt: at, Halted: true}
	r := maintenance.Assess(d)
	var sev []maintenance.Severity
	for _, f := range r.Findings {
		sev = append(sev, f.Severity)
	}
	if !slices.IsSortedFunc(sev, func(a, b maintenance.Severity) int { return rank(b) - rank(a) }) || sev[0] != maintenance.SeverityCritical {
		t.Fatalf("severities not most serious first: %v", sev)
	}
	if !slices.ContainsFunc(r.Findings, func(f maintenance.Finding) bool {
		return f.Domain == maintenance.DomainMaintenance && strings.Contains(f.Detail, "halted") && f.Fix == "kioku run"
	}) {
		t.Fatalf("no halt finding in %+v", r.Findings)
	}
}

func rank(s maintenance.Severity) int {
	return map[maintenance.Severity]int{maintenance.SeverityInfo: 0, maintenance.SeverityWarn: 1, maintenance.SeverityCritical: 2}[s]
}

func TestStatusThresholds(t *testing.T) {
	for score, want := range map[int]maintenance.Status{100: "healthy", 80: "healthy", 79: "degraded", 50: "degraded", 49: "unhealthy", 0: "unhealthy"} {
		if got := maintenance.StatusOf(score); got != want {
			t.Errorf("StatusOf(%d) = %s, want %s", score, got, want)
		}
	}
}

func TestHistoryFixNamesTheScope(t *testing.T) {
	d := healthy()
	d.Mutations.Reviews, d.Mutations.NewestReview = 1, maintenance.MemoryRef{ID: 9, ScopeKey: "u:123"}
	r := maintenance.Assess(d)
	if len(r.Findings) != 1 || r.Findings[0].Fix != "kioku memories history 9 --user 123" || r.Findings[0].Scope != "u:123" {
		t.Fatalf("findings %+v", r.Findings)
	}
}
