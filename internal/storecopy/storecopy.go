// Package storecopy copies a kioku SQLite database into an empty PostgreSQL one (`kioku
// migrate-store`). The PostgreSQL store keeps SQLite's row shapes (times in Unix
// milliseconds, flags as integers, JSON as text), so rows copy as they are, ids included:
// members type memory ids and buttons carry them, so a memory keeps its number across the
// move. Each table is then checked: the same number of rows and the same content hash on
// both sides.
//
// Tables are matched by name and columns by name. A table the PostgreSQL schema does not
// have is reported as skipped with its row count, never dropped silently; the full-text
// tables of SQLite are not data (PostgreSQL indexes the memories itself) and are not
// reported.
package storecopy

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kioku-bot/kioku/memory"
)

// Report is what a copy did.
type Report struct {
	// Tables are the tables copied, in the order they were, each verified.
	Tables []Table `json:"tables"`
	// Skipped are the source's tables with data that the target has no table for.
	Skipped []Skipped `json:"skipped"`
	// Sequences are the target's id sequences moved past the copied ids.
	Sequences []Sequence `json:"sequences"`
}

// Table is one copied table.
type Table struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
	// Hash is the content hash both sides agreed on (hex SHA-256 over the sorted row hashes).
	Hash string `json:"sha256"`
	// Dropped are the source's columns the target lacks: their values were not copied.
	Dropped []string `json:"dropped_columns,omitempty"`
}

// Skipped is a source table that was not copied.
type Skipped struct {
	Name   string `json:"name"`
	Rows   int64  `json:"rows"`
	Reason string `json:"reason"`
}

// Sequence is a target id sequence and the value it was set to.
type Sequence struct {
	Table  string `json:"table"`
	Column string `json:"column"`
	Value  int64  `json:"value"`
}

// sqliteOnly are the source tables that have no counterpart on PostgreSQL by design, and why.
var sqliteOnly = map[string]string{
	"memory_changes": "SQLite's keyword index change log; PostgreSQL searches its own index",
}

// notData are SQLite's bookkeeping tables, neither copied nor reported: each store keeps
// its own. store_repairs is the progress of each store's own one-time repairs: the target
// re-scans what it received with its own credential rules, and stores the dates its
// memories name where the source had not yet (refers_to).
func notData(name string) bool {
	return name == "schema_migrations" || name == "store_repairs" || strings.HasPrefix(name, "sqlite_")
}

// Copy copies every table of src (a SQLite database at the current migration, opened
// read-only) that dst also has, into dst (an empty kioku PostgreSQL schema, migrated), in
// one transaction, then verifies every copied table. It refuses a target that holds rows.
// The source is read in one transaction, so a bot writing to it meanwhile does not tear
// the copy; what it writes after the copy began is not copied, so stop it first.
func Copy(ctx context.Context, src *sql.DB, dst *pgxpool.Pool) (Report, error) {
	var rep Report
	source, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rep, fmt.Errorf("couldn't read the SQLite database: %w", err)
	}
	defer source.Rollback() //nolint:errcheck // read-only
	plan, err := planCopy(ctx, source, dst)
	if err != nil {
		return rep, err
	}
	rep.Skipped = plan.skipped
	if err := refuseNonEmpty(ctx, dst, plan.tables); err != nil {
		return rep, err
	}
	tx, err := dst.Begin(ctx)
	if err != nil {
		return rep, fmt.Errorf("couldn't begin the copy: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	hashes := make(map[string]summary, len(plan.tables))
	for _, t := range plan.tables {
		h, err := copyTable(ctx, source, tx, t)
		if err != nil {
			return rep, err
		}
		hashes[t.name] = h.summary()
	}
	if rep.Sequences, err = moveSequences(ctx, source, tx, plan.tables); err != nil {
		return rep, err
	}
	if err := tx.Commit(ctx); err != nil {
		return rep, fmt.Errorf("couldn't commit the copy: %w", err)
	}
	for _, t := range plan.tables {
		h, err := hashTarget(ctx, dst, t)
		if err != nil {
			return rep, err
		}
		got, want := h.summary(), hashes[t.name]
		if got != want {
			return rep, fmt.Errorf("verification failed for %s: the source has %d rows (hash %s), PostgreSQL %d (hash %s)",
				t.name, want.rows, want.hash, got.rows, got.hash)
		}
		rep.Tables = append(rep.Tables, Table{Name: t.name, Rows: want.rows, Hash: want.hash, Dropped: t.dropped})
	}
	return rep, nil
}

// table is one table to copy: the columns both sides have, with the target's types.
type table struct {
	name    string
	columns []column
	dropped []string
}

// selectAll reads every copied column of the table, in the order the copy and the hash
// take them; the same statement reads the source and, afterwards, the target.
func (t table) selectAll() string {
	return `SELECT ` + quoteIdents(t.columnNames()) + ` FROM ` + quoteIdent(t.name)
}

func (t table) columnNames() []string {
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = c.name
	}
	return names
}

type column struct {
	name string
	kind valueKind
	// identity is set for a target column whose values come from a sequence.
	identity bool
}

type plan struct {
	tables  []table
	skipped []Skipped
}

// planCopy matches the source's tables and columns with the target's.
func planCopy(ctx context.Context, source *sql.Tx, dst *pgxpool.Pool) (plan, error) {
	var p plan
	target, err := targetColumns(ctx, dst)
	if err != nil {
		return p, err
	}
	names, virtual, err := sourceTables(ctx, source)
	if err != nil {
		return p, err
	}
	for _, name := range names {
		if isIndexOf(name, virtual) || notData(name) {
			continue // a full-text table or its shadow (derived from memories), or bookkeeping
		}
		cols, ok := target[name]
		if !ok {
			n, err := countSource(ctx, source, name)
			if err != nil {
				return p, err
			}
			reason, known := sqliteOnly[name]
			if !known {
				reason = "the PostgreSQL store has no such table yet"
			}
			p.skipped = append(p.skipped, Skipped{Name: name, Rows: n, Reason: reason})
			continue
		}
		srcCols, err := sourceColumns(ctx, source, name)
		if err != nil {
			return p, err
		}
		t := table{name: name}
		for _, c := range srcCols {
			tc, ok := cols[c]
			if !ok {
				t.dropped = append(t.dropped, c)
				continue
			}
			t.columns = append(t.columns, tc)
		}
		p.tables = append(p.tables, t)
	}
	return p, nil
}

// isIndexOf reports whether name is one of the virtual (full-text) tables or a shadow
// table of one (memories_fts_data of memories_fts).
func isIndexOf(name string, virtual []string) bool {
	for _, v := range virtual {
		if name == v || strings.HasPrefix(name, v+"_") {
			return true
		}
	}
	return false
}

// sourceTables lists the source's tables by name, and separately its virtual tables.
func sourceTables(ctx context.Context, source *sql.Tx) (names, virtual []string, err error) {
	rows, err := source.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return nil, nil, fmt.Errorf("couldn't list the SQLite tables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			return nil, nil, fmt.Errorf("couldn't list the SQLite tables: %w", err)
		}
		names = append(names, name)
		if strings.HasPrefix(strings.ToUpper(ddl), "CREATE VIRTUAL TABLE") {
			virtual = append(virtual, name)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("couldn't list the SQLite tables: %w", err)
	}
	return names, virtual, nil
}

func sourceColumns(ctx context.Context, source *sql.Tx, name string) ([]string, error) {
	rows, err := source.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the columns of %s: %w", name, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("couldn't read the columns of %s: %w", name, err)
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

func countSource(ctx context.Context, source *sql.Tx, name string) (int64, error) {
	var n int64
	if err := source.QueryRowContext(ctx, `SELECT count(*) FROM `+quoteIdent(name)).Scan(&n); err != nil {
		return 0, fmt.Errorf("couldn't count %s: %w", name, err)
	}
	return n, nil
}

// targetColumns reads the target schema's tables and their writable columns (generated
// columns are computed by PostgreSQL and left out).
func targetColumns(ctx context.Context, dst *pgxpool.Pool) (map[string]map[string]column, error) {
	rows, err := dst.Query(ctx, `SELECT table_name, column_name, data_type, is_identity = 'YES'
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_generated = 'NEVER'`)
	if err != nil {
		return nil, fmt.Errorf("couldn't read the PostgreSQL schema: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]column{}
	for rows.Next() {
		var tbl, col, typ string
		var identity bool
		if err := rows.Scan(&tbl, &col, &typ, &identity); err != nil {
			return nil, fmt.Errorf("couldn't read the PostgreSQL schema: %w", err)
		}
		kind, err := kindOf(typ)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", tbl, col, err)
		}
		if out[tbl] == nil {
			out[tbl] = map[string]column{}
		}
		out[tbl][col] = column{name: col, kind: kind, identity: identity}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("couldn't read the PostgreSQL schema: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the PostgreSQL schema has no tables: open it with kioku first so its migrations run")
	}
	return out, nil
}

// refuseNonEmpty fails when any table the copy writes already holds rows: ids are kept, so
// a copy into a used database would collide with or mix into what is there.
func refuseNonEmpty(ctx context.Context, dst *pgxpool.Pool, tables []table) error {
	var full []string
	for _, t := range tables {
		var any bool
		if err := dst.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+quoteIdent(t.name)+`)`).Scan(&any); err != nil {
			return fmt.Errorf("couldn't read %s on PostgreSQL: %w", t.name, err)
		}
		if any {
			full = append(full, t.name)
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("the PostgreSQL database already holds data (in %s); migrate-store copies into an empty database only, so that memory ids stay as they are",
			strings.Join(full, ", "))
	}
	return nil
}

// copyTable streams one table from the source into the target with COPY, hashing each row
// as it goes. Triggers are off for the table meanwhile: the rows arrive with what the
// triggers would derive (live counts, mention counts) already in them.
func copyTable(ctx context.Context, source *sql.Tx, tx pgx.Tx, t table) (tableHash, error) {
	var h tableHash
	if len(t.columns) == 0 {
		return h, nil
	}
	rows, err := source.QueryContext(ctx, t.selectAll())
	if err != nil {
		return h, fmt.Errorf("couldn't read %s: %w", t.name, err)
	}
	defer rows.Close()
	if _, err := tx.Exec(ctx, `ALTER TABLE `+quoteIdent(t.name)+` DISABLE TRIGGER USER`); err != nil {
		return h, fmt.Errorf("couldn't pause the triggers of %s: %w", t.name, err)
	}
	src := &rowSource{rows: rows, table: t, hash: &h}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{t.name}, t.columnNames(), src); err != nil {
		return h, fmt.Errorf("couldn't copy %s: %w", t.name, err)
	}
	if _, err := tx.Exec(ctx, `ALTER TABLE `+quoteIdent(t.name)+` ENABLE TRIGGER USER`); err != nil {
		return h, fmt.Errorf("couldn't restore the triggers of %s: %w", t.name, err)
	}
	return h, nil
}

// rowSource feeds COPY from the source's rows, converted to the target's column types.
type rowSource struct {
	rows  *sql.Rows
	table table
	hash  *tableHash
	vals  []any
	err   error
}

func (r *rowSource) Next() bool {
	if !r.rows.Next() {
		return false
	}
	raw := make([]any, len(r.table.columns))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := r.rows.Scan(ptrs...); err != nil {
		r.err = fmt.Errorf("couldn't read a row of %s: %w", r.table.name, err)
		return false
	}
	r.vals = make([]any, len(raw))
	for i, c := range r.table.columns {
		v, err := convert(raw[i], c.kind)
		if err != nil {
			r.err = fmt.Errorf("%s.%s: %w", r.table.name, c.name, err)
			return false
		}
		r.vals[i] = v
	}
	if fix := rowFixes[r.table.name]; fix != nil {
		fix(r.table.columns, r.vals)
	}
	r.hash.add(r.vals)
	return true
}

func (r *rowSource) Values() ([]any, error) { return r.vals, nil }

func (r *rowSource) Err() error {
	if r.err != nil {
		return r.err
	}
	if err := r.rows.Err(); err != nil {
		return fmt.Errorf("couldn't read %s: %w", r.table.name, err)
	}
	return nil
}

// hashTarget reads back a copied table and hashes it as the source was.
func hashTarget(ctx context.Context, dst *pgxpool.Pool, t table) (tableHash, error) {
	var h tableHash
	if len(t.columns) == 0 {
		return h, nil
	}
	rows, err := dst.Query(ctx, t.selectAll())
	if err != nil {
		return h, fmt.Errorf("couldn't read back %s: %w", t.name, err)
	}
	defer rows.Close()
	for rows.Next() {
		raw, err := rows.Values()
		if err != nil {
			return h, fmt.Errorf("couldn't read back %s: %w", t.name, err)
		}
		vals := make([]any, len(raw))
		for i, c := range t.columns {
			if vals[i], err = convert(raw[i], c.kind); err != nil {
				return h, fmt.Errorf("%s.%s on PostgreSQL: %w", t.name, c.name, err)
			}
		}
		h.add(vals)
	}
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("couldn't read back %s: %w", t.name, err)
	}
	return h, nil
}

// moveSequences sets each identity sequence of a copied table past the largest id copied,
// so the next row PostgreSQL numbers does not take an id already used. For memories, ids
// that only the history and evidence still name count too: a purged memory's number is
// never handed to another.
func moveSequences(ctx context.Context, source *sql.Tx, tx pgx.Tx, tables []table) ([]Sequence, error) {
	copied := map[string]bool{}
	for _, t := range tables {
		copied[t.name] = true
	}
	var out []Sequence
	for _, t := range tables {
		for _, c := range t.columns {
			if !c.identity {
				continue
			}
			high, err := highestID(ctx, source, t.name, c.name, copied)
			if err != nil {
				return nil, err
			}
			if high < 1 {
				continue // nothing copied: the sequence starts at 1 as it is
			}
			if _, err := tx.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), $3)`, t.name, c.name, high); err != nil {
				return nil, fmt.Errorf("couldn't move the id sequence of %s: %w", t.name, err)
			}
			out = append(out, Sequence{Table: t.name, Column: c.name, Value: high})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out, nil
}

// highestID is the largest id of table.col in the source, and for memories also the
// largest memory id its history and evidence name and the highest number SQLite ever
// handed out for one (its AUTOINCREMENT sequence, which purged memories leave behind).
func highestID(ctx context.Context, source *sql.Tx, table, col string, copied map[string]bool) (int64, error) {
	q := `SELECT coalesce(max(` + quoteIdent(col) + `), 0) AS m FROM ` + quoteIdent(table)
	if table == "memories" && col == "id" {
		for _, ref := range []string{"memory_history", "memory_evidence"} {
			if copied[ref] {
				q += ` UNION ALL SELECT coalesce(max(memory_id), 0) FROM ` + ref
			}
		}
		q += ` UNION ALL SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'memories'`
		q = `SELECT max(m) FROM (` + q + `)`
	}
	var high int64
	if err := source.QueryRowContext(ctx, q).Scan(&high); err != nil {
		return 0, fmt.Errorf("couldn't read the largest id of %s: %w", table, err)
	}
	return high, nil
}

// rowFixes adjust a table's rows where the two stores' shapes differ, before the row is
// written and hashed: verification then compares what PostgreSQL holds with what was meant
// to be written.
var rowFixes = map[string]func(cols []column, vals []any){
	"memories": fillSearchText,
}

// fillSearchText writes out a memory's search text where SQLite left it empty. SQLite
// stores "" for text that is its own search text (plain ASCII) and its triggers index the
// content then; PostgreSQL's word index is generated from the column alone.
func fillSearchText(cols []column, vals []any) {
	at := map[string]int{}
	for i, c := range cols {
		at[c.name] = i
	}
	for dst, src := range map[string]string{"search_text": "content", "search_author": "author_name"} {
		d, okD := at[dst]
		s, okS := at[src]
		if !okD || !okS {
			continue
		}
		if cur, _ := vals[d].(string); cur == "" {
			if text, ok := vals[s].(string); ok {
				vals[d] = memory.SearchText(text)
			}
		}
	}
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}
