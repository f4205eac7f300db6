package bench

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Kept databases (Options.Keep). Loading a million memories takes minutes; a kept directory
// lets later runs time recall, start-up and memory on the same corpus without loading it
// again. The directory holds the databases, the corpus's parameters (keepStamp) and the id
// each corpus memory got, so that quality is scored exactly as in the run that loaded it.
// The stamp is written last: a run cut short leaves no stamp, and the next run starts over.

const (
	keepStampFile = "corpus.json"
	keepIDsFile   = "ids.bin"
)

// keepStamp is what makes two corpora the same.
type keepStamp struct {
	Memories int    `json:"memories"`
	Dims     int    `json:"dims"`
	Scopes   int    `json:"scopes"`
	Seed     uint64 `json:"seed"`
}

func (r *run) stamp() keepStamp {
	return keepStamp{Memories: r.opt.Memories, Dims: r.opt.Dims, Scopes: r.opt.Scopes, Seed: r.opt.Seed}
}

// databases returns the directory the run's databases live in and, when Options.Keep holds
// the databases of this very corpus, the ids its memories got (nil when they must be loaded).
// A kept directory of another corpus is emptied of kioku's files first.
func (r *run) databases() (string, []int64, error) {
	if r.opt.Keep == "" {
		dir, err := os.MkdirTemp(r.opt.Dir, "kioku-bench-")
		if err != nil {
			return "", nil, fmt.Errorf("couldn't create bench directory: %w", err)
		}
		return dir, nil, nil
	}
	dir := r.opt.Keep
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("couldn't create bench directory: %w", err)
	}
	ids, err := r.kept(dir)
	if err == nil {
		return dir, ids, nil
	}
	r.progress("%s: %v; loading a new corpus", dir, err)
	for _, name := range []string{keepStampFile, keepIDsFile, "bench.db", "bench.db-wal", "bench.db-shm", "alone.db", "alone.db-wal", "alone.db-shm"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", nil, fmt.Errorf("couldn't clear bench directory: %w", err)
		}
	}
	return dir, nil, nil
}

// kept reads the ids of the corpus kept in dir, or says why it can't be reused.
func (r *run) kept(dir string) ([]int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, keepStampFile))
	if err != nil {
		return nil, errors.New("no kept corpus")
	}
	var st keepStamp
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("unreadable %s", keepStampFile)
	}
	if st != r.stamp() {
		return nil, fmt.Errorf("kept corpus is %+v, not %+v", st, r.stamp())
	}
	need := []string{"bench.db"}
	if r.opt.Scopes > 1 {
		need = append(need, "alone.db")
	}
	for _, name := range need {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("%s is missing", name)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, keepIDsFile))
	if err != nil || len(raw) != 8*len(r.c.texts) {
		return nil, fmt.Errorf("%s does not hold %d ids", keepIDsFile, len(r.c.texts))
	}
	ids := make([]int64, len(r.c.texts))
	for i := range ids {
		ids[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
	}
	r.progress("reusing the corpus kept in %s", dir)
	return ids, nil
}

// keep records, after a load into a kept directory, the ids and then the stamp.
func (r *run) keep(dir string, ids []int64) error {
	if r.opt.Keep == "" {
		return nil
	}
	raw := make([]byte, 8*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(id))
	}
	if err := os.WriteFile(filepath.Join(dir, keepIDsFile), raw, 0o644); err != nil {
		return fmt.Errorf("couldn't keep the corpus ids: %w", err)
	}
	b, _ := json.Marshal(r.stamp())
	if err := os.WriteFile(filepath.Join(dir, keepStampFile), b, 0o644); err != nil {
		return fmt.Errorf("couldn't keep the corpus stamp: %w", err)
	}
	return nil
}
