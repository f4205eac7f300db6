package ltm

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kioku-bot/kioku/memory"
	"github.com/kioku-bot/kioku/memory/maintenance"
	"github.com/kioku-bot/kioku/memory/recall"
)

// The read side of the words that travel together (comentions.go): what a question's words
// reach, and the check of the counts against the live memories.

// associated returns the words the visible memories most often hold beside the words of
// the question (recall.QueryAssocTerms), strongest first, at most assocMaxExpansions, none of
// them a word of the question. vis and aud are the asker's visibility, as every candidate
// query applies it: only the buckets it allows are added up.
func associated(ctx context.Context, q querier, text string, vis []memory.Visible, aud *memory.Audience) ([]string, error) {
	words := recall.QueryAssocTerms(text)
	if len(words) == 0 || len(vis) == 0 {
		return nil, nil
	}
	// Each visible scope is read on its own, so that every query is a range of the
	// primary key (scope, word, partner).
	wheres := make([]string, len(vis))
	whereArgs := make([][]any, len(vis))
	for i, v := range vis {
		var err error
		if wheres[i], whereArgs[i], err = visibleClause(v, aud); err != nil {
			return nil, err
		}
	}
	sum := func(terms []string, partners bool) (map[[2]string]int, error) {
		out := map[[2]string]int{}
		for i := range wheres {
			if err := sumPairs(ctx, q, terms, partners, wheres[i], whereArgs[i], out); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// held[w] is how many visible memories hold w.
	alone, err := sum(words, false)
	if err != nil {
		return nil, err
	}
	held := map[string]int{}
	var rare []string
	for _, w := range words {
		held[w] = alone[[2]string{w, ""}]
		if held[w] >= assocMinTogether && held[w] <= assocMaxHeld {
			rare = append(rare, w)
		}
	}
	if len(rare) == 0 {
		return nil, nil
	}
	together, err := sum(rare, true)
	if err != nil {
		return nil, err
	}
	candidate := map[string]bool{}
	for pair, n := range together {
		if _, asked := held[pair[1]]; n >= assocMinTogether && !asked {
			candidate[pair[1]] = true
		}
	}
	if len(candidate) == 0 {
		return nil, nil
	}
	partners := slices.Sorted(maps.Keys(candidate))
	partnersAlone, err := sum(partners, false)
	if err != nil {
		return nil, err
	}
	strength := map[string]float64{}
	for pair, n := range together {
		a, p := pair[0], pair[1]
		hp := partnersAlone[[2]string{p, ""}]
		if n < assocMinTogether || hp == 0 || !candidate[p] {
			continue
		}
		if st := float64(n) / math.Sqrt(float64(held[a])*float64(hp)); st >= assocMinStrength && st > strength[p] {
			strength[p] = st
		}
	}
	out := make([]string, 0, len(strength))
	for p := range strength {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if strength[out[i]] != strength[out[j]] {
			return strength[out[i]] > strength[out[j]]
		}
		return out[i] < out[j]
	})
	return out[:min(len(out), assocMaxExpansions)], nil
}

// sumPairs adds to out, over the buckets where allows (over the alias m), the counts of
// each of words on its own (partner ""), or with its partners when partners is set.
func sumPairs(ctx context.Context, q querier, words []string, partners bool, where string, whereArgs []any, out map[[2]string]int) error {
	for lo := 0; lo < len(words); lo += 100 {
		chunk := words[lo:min(lo+100, len(words))]
		args := make([]any, 0, len(chunk)+len(whereArgs))
		for _, w := range chunk {
			args = append(args, w)
		}
		args = append(args, whereArgs...)
		cond := " AND m.partner = ''"
		if partners {
			cond = " AND m.partner <> ''"
		}
		rows, err := q.QueryContext(ctx, `SELECT m.term, m.partner, SUM(m.n) FROM comentions m
			WHERE m.term IN (`+placeholders(len(chunk))+`)`+cond+` AND `+where+` GROUP BY m.term, m.partner`, args...)
		if err != nil {
			return fmt.Errorf("couldn't read which words travel together: %w", err)
		}
		err = func() error {
			defer rows.Close()
			for rows.Next() {
				var (
					t, p string
					n    sql.NullInt64
				)
				if err := rows.Scan(&t, &p, &n); err != nil {
					return err
				}
				out[[2]string{t, p}] += int(n.Int64)
			}
			return rows.Err()
		}()
		if err != nil {
			return fmt.Errorf("couldn't read which words travel together: %w", err)
		}
	}
	return nil
}

// CheckWordCompany counts the live memories' words afresh and compares the result with the
// stored counts and records: every pair and record that differs, or that no live memory
// explains, is drift. It reads every memory of the store, so it is for tests, upgrades and
// an operator's deliberate check, not for a hot path.
func (s *Maintenance) CheckWordCompany(ctx context.Context) (maintenance.WordCompanyReport, error) {
	var rep maintenance.WordCompanyReport
	rows, err := s.db.read.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE deleted_at IS NULL ORDER BY id`)
	if err != nil {
		return rep, fmt.Errorf("couldn't read memories: %w", err)
	}
	live, err := collectMemories(rows)
	if err != nil {
		return rep, err
	}
	want := map[comentionKey]int{}
	wantRecords := map[int64]string{}
	for _, m := range live {
		terms := recall.AssocTerms(m.Content)
		if len(terms) == 0 {
			continue
		}
		b := bucketOf(m)
		for _, a := range terms {
			want[comentionKey{b, a, ""}]++
			for _, p := range terms {
				if p != a {
					want[comentionKey{b, a, p}]++
				}
			}
		}
		wantRecords[m.ID] = strings.Join([]string{b.scopeKey, b.guildID, b.channelID, strings.Join(terms, " ")}, "\x00")
	}
	rep.Memories = len(wantRecords)
	err = queryEach(ctx, s.db.read, `SELECT scope_key, term, guild_id, channel_id, partner, n FROM comentions`, nil,
		func(rows *sql.Rows) error {
			var (
				k comentionKey
				n int
			)
			if err := rows.Scan(&k.scopeKey, &k.term, &k.guildID, &k.channelID, &k.partner, &n); err != nil {
				return err
			}
			rep.Pairs++
			if want[k] != n {
				rep.Drift++
			}
			delete(want, k)
			return nil
		})
	if err != nil {
		return rep, fmt.Errorf("couldn't read the word company: %w", err)
	}
	rep.Drift += len(want)
	recorded, err := readRecorded(ctx, s.db.read, `1 = 1`)
	if err != nil {
		return rep, err
	}
	for _, r := range recorded {
		got := strings.Join([]string{r.bucket.scopeKey, r.bucket.guildID, r.bucket.channelID, strings.Join(r.terms, " ")}, "\x00")
		if wantRecords[r.id] != got {
			rep.Drift++
		}
		delete(wantRecords, r.id)
	}
	rep.Drift += len(wantRecords)
	return rep, nil
}

// Associated returns the words the memories q may see most often hold beside the words of
// q.Text (the words its recall searches at Stages.CoMention's weight), strongest first: for
// explaining a recall, and for tests of what a question can reach.
func (s *Recall) Associated(ctx context.Context, q memory.SearchQuery) ([]string, error) {
	return associated(ctx, s.db.read, q.Text, visibleScopes(&q), q.Audience)
}
