package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Dataset is the JSON document of SPEC §8.
type Dataset struct {
	Name   string  `json:"name"`
	Scopes []Scope `json:"scopes"`
}

// Scope is one server of a dataset: its memories and the questions asked in it.
type Scope struct {
	GuildID  string        `json:"guild_id"`
	Memories []MemoryEntry `json:"memories"`
	Queries  []Query       `json:"queries"`
}

// MemoryEntry is one dataset memory.
type MemoryEntry struct {
	ID        string    `json:"id"`
	Content   string    `json:"content"`
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"created_at"`
}

// Query is one dataset question with the ids of the memories that answer it.
type Query struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Relevant []string `json:"relevant"`
	Category string   `json:"category"`
	// AskedAt is when the question is asked (RFC 3339); relative dates in Text resolve
	// against it. Empty means the creation time of the scope's newest memory (Scope.AskedAt).
	AskedAt string `json:"asked_at,omitempty"`
}

// AskedAt returns the time q is asked in s: its asked_at, or else the created_at of the
// newest memory of s (the zero time when no memory of s has one).
func (s Scope) AskedAt(q Query) (time.Time, error) {
	if q.AskedAt != "" {
		t, err := time.Parse(time.RFC3339, q.AskedAt)
		if err != nil {
			return time.Time{}, fmt.Errorf("query %q: asked_at %q is not an RFC 3339 time such as 2023-06-01T10:00:00Z", q.ID, q.AskedAt)
		}
		return t, nil
	}
	return s.newest(), nil
}

// newest is the latest created_at of the scope's memories, zero when none has one.
func (s Scope) newest() time.Time {
	var t time.Time
	for _, m := range s.Memories {
		if m.CreatedAt.After(t) {
			t = m.CreatedAt
		}
	}
	return t
}

// Load reads and checks a dataset file.
func Load(path string) (Dataset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Dataset{}, fmt.Errorf("couldn't read dataset: %w", err)
	}
	var d Dataset
	if err := json.Unmarshal(data, &d); err != nil {
		return Dataset{}, fmt.Errorf("couldn't parse dataset %s: %w", path, err)
	}
	if err := d.validate(); err != nil {
		return Dataset{}, fmt.Errorf("invalid dataset %s: %w", path, err)
	}
	return d, nil
}

func (d *Dataset) validate() error {
	if len(d.Scopes) == 0 {
		return errors.New("no scopes")
	}
	guilds := map[string]bool{}
	for i, s := range d.Scopes {
		if s.GuildID == "" {
			return fmt.Errorf("scope %d has no guild_id", i+1)
		}
		if guilds[s.GuildID] {
			return fmt.Errorf("guild_id %q appears twice", s.GuildID)
		}
		guilds[s.GuildID] = true
		ids := map[string]bool{}
		for _, m := range s.Memories {
			if m.ID == "" || ids[m.ID] {
				return fmt.Errorf("scope %s: memory id %q is empty or repeated", s.GuildID, m.ID)
			}
			ids[m.ID] = true
		}
		for _, q := range s.Queries {
			if _, err := s.AskedAt(q); err != nil {
				return fmt.Errorf("scope %s: %w", s.GuildID, err)
			}
			if len(q.Relevant) == 0 {
				return fmt.Errorf("scope %s: query %q lists no relevant memory", s.GuildID, q.ID)
			}
			for _, r := range q.Relevant {
				if !ids[r] {
					return fmt.Errorf("scope %s: query %q names unknown memory %q", s.GuildID, q.ID, r)
				}
			}
		}
	}
	return nil
}
