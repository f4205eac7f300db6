// Command foreignclient is another SQLite client of a kioku database: it uses only
// database/sql and the SQLite driver, and nothing of kioku's, so it proves the schema needs
// no Go code of kioku's to be read or written (cmd/kioku's TestForeignClient runs it).
//
// Usage: go run ./testdata/foreignclient DB GUILD CONTENT...
//
// It prints, as JSON, every live memory it read and the ids of the server memories of GUILD
// it inserted, one per CONTENT, written as a client that knows nothing of search text would.
package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

type memoryRow struct {
	ID       int64  `json:"id"`
	ScopeKey string `json:"scope_key"`
	Content  string `json:"content"`
	Author   string `json:"author_name"`
}

type report struct {
	Read     []memoryRow `json:"read"`
	Inserted []int64     `json:"inserted"`
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: foreignclient DB GUILD CONTENT...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "foreignclient:", err)
		os.Exit(1)
	}
}

func run(path, guild string, contents []string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	var rep report
	rows, err := db.Query(`SELECT id, scope_key, content, author_name FROM memories WHERE deleted_at IS NULL ORDER BY id`)
	if err != nil {
		return fmt.Errorf("couldn't read memories: %w", err)
	}
	for rows.Next() {
		var m memoryRow
		if err := rows.Scan(&m.ID, &m.ScopeKey, &m.Content, &m.Author); err != nil {
			rows.Close()
			return fmt.Errorf("couldn't read memories: %w", err)
		}
		rep.Read = append(rep.Read, m)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("couldn't read memories: %w", err)
	}
	now := time.Now().UnixMilli()
	for _, content := range contents {
		normalized := strings.ToLower(content)
		sum := sha256.Sum256([]byte(normalized))
		var id int64
		if err := db.QueryRow(`INSERT INTO memories (scope, scope_key, guild_id, type, content, normalized, content_hash,
			source, author_name, created_at, updated_at) VALUES ('server', ?, ?, 'fact', ?, ?, ?, 'import', 'Ｍａｒｉ', ?, ?)
			RETURNING id`, "g:"+guild, guild, content, normalized, hex.EncodeToString(sum[:]), now, now).Scan(&id); err != nil {
			return fmt.Errorf("couldn't insert a memory: %w", err)
		}
		rep.Inserted = append(rep.Inserted, id)
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}
