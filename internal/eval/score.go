package eval

import (
	"math"
	"slices"
	"time"
)

type queryResult struct {
	category string
	recall   map[int]float64
	rr       float64
	ndcg     float64
	took     time.Duration
}

// score computes one query's metrics from its ranking, where each ranked entry lists the
// dataset ids the retrieved memory stands for.
func score(q Query, ranked [][]string, ks []int, took time.Duration) queryResult {
	rel := make(map[string]bool, len(q.Relevant))
	for _, r := range q.Relevant {
		rel[r] = true
	}
	qr := queryResult{category: q.Category, recall: map[int]float64{}, took: took}
	ks = append(slices.Clone(ks), 10)
	for _, k := range ks {
		found := map[string]bool{}
		for _, ids := range ranked[:min(k, len(ranked))] {
			for _, id := range ids {
				if rel[id] {
					found[id] = true
				}
			}
		}
		qr.recall[k] = float64(len(found)) / float64(len(rel))
	}
	// MRR and nDCG count retrieved memories: a memory that absorbed two relevant ids is
	// one relevant result, and the ideal ranking has as many relevant results as there are
	// distinct memories holding the relevant ids.
	var dcg float64
	hits := 0
	for i, ids := range ranked {
		if !slices.ContainsFunc(ids, func(id string) bool { return rel[id] }) {
			continue
		}
		if qr.rr == 0 {
			qr.rr = 1 / float64(i+1)
		}
		if i < 10 {
			dcg += 1 / math.Log2(float64(i+2))
		}
		hits++
	}
	ideal := idealCount(q.Relevant, ranked)
	var idcg float64
	for i := range min(ideal, 10) {
		idcg += 1 / math.Log2(float64(i+2))
	}
	if idcg > 0 {
		qr.ndcg = dcg / idcg
	}
	return qr
}

// idealCount is the number of distinct memories the relevant ids live in: the relevant ids
// minus those absorbed into a memory that also absorbed another relevant id.
func idealCount(relevant []string, ranked [][]string) int {
	n := len(relevant)
	rel := map[string]bool{}
	for _, r := range relevant {
		rel[r] = true
	}
	for _, ids := range ranked {
		c := 0
		for _, id := range ids {
			if rel[id] {
				c++
			}
		}
		if c > 1 {
			n -= c - 1
		}
	}
	return n
}

func aggregate(qs []queryResult, ks []int) Metrics {
	m := Metrics{Queries: len(qs), Recall: map[int]float64{}}
	if len(qs) == 0 {
		return m
	}
	lat := make([]time.Duration, len(qs))
	for i, q := range qs {
		for _, k := range ks {
			m.Recall[k] += q.recall[k]
		}
		m.MRR += q.rr
		m.NDCG10 += q.ndcg
		lat[i] = q.took
	}
	n := float64(len(qs))
	for _, k := range ks {
		m.Recall[k] /= n
	}
	m.MRR /= n
	m.NDCG10 /= n
	slices.Sort(lat)
	m.P50, m.P95 = percentile(lat, 0.50), percentile(lat, 0.95)
	return m
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 {
	return math.Round(float64(d.Microseconds())) / 1000
}

func round4(x float64) float64 { return math.Round(x*10000) / 10000 }

func byCategory(results []queryResult, ks []int) map[string]Metrics {
	byCat := map[string][]queryResult{}
	for _, qr := range results {
		byCat[qr.category] = append(byCat[qr.category], qr)
	}
	out := make(map[string]Metrics, len(byCat))
	for c, qs := range byCat {
		out[c] = aggregate(qs, ks)
	}
	return out
}
