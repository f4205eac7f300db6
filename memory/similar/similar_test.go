package similar_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/kioku-bot/kioku/memory/similar"
)

// pair is one labelled pair of testdata/pairs.json.
type pair struct {
	Lang    string `json:"lang"`
	A       string `json:"a"`
	B       string `json:"b"`
	Similar bool   `json:"similar"`
	Kind    string `json:"kind"`
	Trap    string `json:"trap"`
	Holdout bool   `json:"holdout"`
}

func loadPairs(t *testing.T) []pair {
	t.Helper()
	raw, err := os.ReadFile("testdata/pairs.json")
	if err != nil {
		t.Fatal(err)
	}
	var set struct {
		Pairs []pair `json:"pairs"`
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatalf("testdata/pairs.json: %v", err)
	}
	return set.Pairs
}

// maxFalseSimilar is the share of pairs that are not near-duplicates the detector may call
// similar (issue: at most 5%).
const maxFalseSimilar = 0.05

// tally counts a detector's answers on one part of the labelled set.
type tally struct{ tp, fp, fn, tn int }

func (c *tally) add(want, got bool) {
	switch {
	case want && got:
		c.tp++
	case want:
		c.fn++
	case got:
		c.fp++
	default:
		c.tn++
	}
}

func (c tally) precision() float64 { return ratio(c.tp, c.tp+c.fp) }
func (c tally) recall() float64    { return ratio(c.tp, c.tp+c.fn) }
func (c tally) falseSimilar() float64 {
	return ratio(c.fp, c.fp+c.tn)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestLabelledPairs runs Compare over the labelled set, on the pairs the detector was tuned
// on (dev) and on the held-out ones, per language: false "similar" answers stay at or
// under 5% of the pairs that are not near-duplicates, and precision and recall are
// reported. Paraphrases in other words (a synonym the table lacks, another construction)
// are missed by design: recall is what a words-only check can give without risking a
// false "similar".
func TestLabelledPairs(t *testing.T) {
	pairs := loadPairs(t)
	if len(pairs) < 100 {
		t.Fatalf("%d labelled pairs, want at least 100", len(pairs))
	}
	run := func(name string, verdict func(p pair) similar.Verdict) {
		t.Run(name, func(t *testing.T) {
			parts := map[string]*tally{}
			for _, p := range pairs {
				part := "dev"
				if p.Holdout {
					part = "holdout"
				}
				v := verdict(p)
				for _, key := range []string{part, part + "/" + p.Lang} {
					if parts[key] == nil {
						parts[key] = &tally{}
					}
					parts[key].add(p.Similar, v.Similar)
				}
				if v.Similar != p.Similar {
					t.Logf("%s %s %s %s: %q / %q → similar=%v score=%.2f apart=%s", part, p.Lang, p.Kind, p.Trap, p.A, p.B, v.Similar, v.Score, v.Apart)
				}
				if back := verdict(pair{A: p.B, B: p.A}); back != v {
					t.Errorf("not symmetric: %q / %q → %+v, reversed %+v", p.A, p.B, v, back)
				}
			}
			for _, key := range []string{"dev", "dev/en", "dev/ja", "holdout", "holdout/en", "holdout/ja"} {
				c := parts[key]
				t.Logf("%-11s pairs %3d  precision %.2f  recall %.2f  false similar %.3f (%d of %d)",
					key, c.tp+c.fp+c.fn+c.tn, c.precision(), c.recall(), c.falseSimilar(), c.fp, c.fp+c.tn)
				if key == "dev" || key == "holdout" {
					if c.falseSimilar() > maxFalseSimilar {
						t.Errorf("%s: false similar %.3f, want at most %.2f", key, c.falseSimilar(), maxFalseSimilar)
					}
				}
			}
		})
	}
	run("Words", func(p pair) similar.Verdict { return similar.Compare(p.A, p.B) })
}

// TestLabelledPairsAtFullCosine is the embeddings' worst case: CompareCosine with a cosine
// of 1 for every pair, as if the embedding model could not tell any two statements apart.
// What it calls similar past Compare is what the guards alone let through.
func TestLabelledPairsAtFullCosine(t *testing.T) {
	for _, p := range loadPairs(t) {
		words, full := similar.Compare(p.A, p.B), similar.CompareCosine(p.A, p.B, 1)
		if words.Similar && !full.Similar {
			t.Errorf("%q / %q: similar by words but not at full cosine", p.A, p.B)
		}
		if full.Similar != words.Similar {
			t.Logf("holdout=%v %s %s %s: %q / %q → similar at full cosine (score %.2f)", p.Holdout, p.Lang, p.Kind, p.Trap, p.A, p.B, full.Score)
		}
	}
}
