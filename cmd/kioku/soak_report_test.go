//go:build soak

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// soakReport is the one JSON line a soak run prints.
type soakReport struct {
	Engine        string  `json:"engine"`
	Processes     int     `json:"processes"`
	Conversations int     `json:"conversations"`
	Guilds        int     `json:"guilds"`
	DurationS     float64 `json:"duration_s"`
	Turns         int     `json:"turns"`
	TurnsPerS     float64 `json:"turns_per_s"`
	OverheadP50Ms float64 `json:"overhead_p50_ms"`
	OverheadP99Ms float64 `json:"overhead_p99_ms"`
	LatencyP50Ms  float64 `json:"latency_p50_ms"`
	LatencyP99Ms  float64 `json:"latency_p99_ms"`
	// The heap in use of the bot's processes together, after a full collection.
	HeapStartMB float64 `json:"heap_inuse_start_mb"`
	HeapEndMB   float64 `json:"heap_inuse_end_mb"`
	// HeapPerMemoryB is the heap's growth from the baseline over the memories stored since.
	HeapPerMemoryB float64 `json:"heap_per_memory_b"`
	// HeapSamples are taken through the run: the heap grows with what is stored when
	// heap_per_memory_b stays level and unexplained_mb flat; a leak grows with time.
	HeapSamples       []soakHeapSample `json:"heap_samples"`
	GoroutinesStart   int              `json:"goroutines_start"`
	GoroutinesEnd     int              `json:"goroutines_end"`
	FDsStart          int              `json:"open_files_start"`
	FDsEnd            int              `json:"open_files_end"`
	DBConnsStart      int              `json:"db_connections_start,omitempty"`
	DBConnsEnd        int              `json:"db_connections_end,omitempty"`
	DBBytes           int64            `json:"db_bytes"`
	DBBytesPerMemory  float64          `json:"db_bytes_per_memory"`
	MemoriesStart     int              `json:"memories_start"`
	Memories          int              `json:"memories"`
	MemoriesTool      int              `json:"memories_tool"`
	MemoriesPipeline  int              `json:"memories_pipeline"`
	ChatCalls         int64            `json:"model_chat_calls"`
	ExtractCalls      int64            `json:"model_extract_calls"`
	DecideCalls       int64            `json:"model_decide_calls"`
	ForgetMes         int              `json:"forget_mes"`
	Deletes           int              `json:"message_deletes"`
	Faults            []*soakFaultRun  `json:"faults"`
	RefusedTurns      int              `json:"refused_turns"`
	KilledInFlight    int              `json:"killed_in_flight"`
	JobsWaiting       int              `json:"jobs_waiting_retry"`
	Errors            int              `json:"errors"`
	Warnings          int              `json:"warnings"`
	Lost              int              `json:"lost"`
	Late              int              `json:"late"`
	DuplicateReplies  int              `json:"duplicated"`
	DuplicateMemories int              `json:"duplicate_memories"`
	JobsRunTwice      int              `json:"jobs_run_twice"`
	// Checked counts the turns each end check compared with the database, so a check that
	// found nothing to compare shows.
	Checked soakChecked `json:"checked"`
}

// soakChecked counts what the end checks compared: memories the model was told were
// saved, facts the pipeline extracted from turns it moved past, deleted messages, turns
// of forgotten members, and the pipeline's proposals (one per committed turn).
type soakChecked struct {
	Saved     int `json:"saved_memories"`
	Extracted int `json:"pipeline_facts"`
	Deleted   int `json:"deleted_messages"`
	Forgotten int `json:"forgotten_turns"`
	Proposals int `json:"pipeline_proposals"`
}

// soakHeapSample is one sample of the run: seconds since the load began, the heap in use
// (after a full collection) and the live memories then.
type soakHeapSample struct {
	AtS            float64 `json:"t_s"`
	HeapMB         float64 `json:"heap_mb"`
	Memories       int     `json:"memories"`
	HeapPerMemoryB float64 `json:"heap_per_memory_b"`
	UnexplainedMB  float64 `json:"unexplained_mb"`

	heap uint64
}

// soakUsage is what the bot's processes hold at one moment, summed over them.
type soakUsage struct {
	Heap       uint64 `json:"heap_inuse"`
	Goroutines int    `json:"goroutines"`
	FDs        int    `json:"open_files"`
}

// soakMemStats returns the heap in use and the goroutine count after a full collection.
func soakMemStats() (heap uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse, runtime.NumGoroutine()
}

// soakOpenFiles counts the process's open file descriptors (Linux), -1 where it cannot.
func soakOpenFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

func writeHeapProfile(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// soakHistogram counts durations in buckets 1% wide from 10 µs to about 10 minutes, so
// quantiles are exact to 1% in fixed memory.
type soakHistogram struct {
	buckets [1800]int
	n       int
}

const (
	histogramBase   = 10 * time.Microsecond
	histogramGrowth = 1.01
)

func (h *soakHistogram) add(d time.Duration) {
	i := 0
	if d > histogramBase {
		i = int(math.Log(float64(d)/float64(histogramBase)) / math.Log(histogramGrowth))
	}
	h.buckets[min(i, len(h.buckets)-1)]++
	h.n++
}

// quantileMs returns the upper edge of the bucket holding the q-quantile, in
// milliseconds (0 when empty).
func (h *soakHistogram) quantileMs(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank, seen := int(math.Ceil(q*float64(h.n))), 0
	for i, c := range h.buckets {
		if seen += c; seen >= max(rank, 1) {
			upper := float64(histogramBase) * math.Pow(histogramGrowth, float64(i+1))
			return round2(upper / float64(time.Millisecond))
		}
	}
	return 0
}

// soakLogCounts are kioku's log lines during the soak, of every process: counted by level,
// and warnings and errors by message, instead of kept, so a long run holds no growing log.
// An error line a fault explains (logged while it held or soon after) counts for the fault.
type soakLogCounts struct {
	mu     sync.Mutex
	levels map[string]int
	byMsg  map[string]int
	errors []string // the first unexplained error lines, whole
	// faultErrors are the first error lines faults explain, for the test's log.
	faultErrors []string
	// explain returns the fault an error line logged at that time is part of, or nil.
	explain func(at time.Time) *soakFaultRun
}

func newSoakLogCounts() *soakLogCounts {
	return &soakLogCounts{levels: map[string]int{}, byMsg: map[string]int{}}
}

// soakLog is one process's stderr: JSON log lines, split on newlines and counted.
type soakLog struct {
	mu      sync.Mutex
	partial []byte
	counts  *soakLogCounts
}

func (l *soakLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.counts.line(l.partial[:i])
		l.partial = l.partial[i+1:]
	}
	l.partial = slices.Clip(l.partial)
	return len(p), nil
}

func (c *soakLogCounts) line(line []byte) {
	rec, ok := parseLogLine(line)
	var fault *soakFaultRun
	switch {
	case !ok:
		// Not kioku's log: a panic, a race report. Never a fault's doing.
		rec.Level, rec.Msg = "ERROR", "unparsable log line"
	case rec.Level == "ERROR" && c.explain != nil:
		fault = c.explain(rec.Time)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec.Level != "WARN" && rec.Level != "ERROR" {
		c.levels[rec.Level]++
		return
	}
	if fault != nil {
		fault.LogErrors++
		c.byMsg["ERROR (during "+fault.Name+"): "+rec.Msg]++
		if len(c.faultErrors) < 10 {
			c.faultErrors = append(c.faultErrors, string(line))
		}
		return
	}
	c.levels[rec.Level]++
	c.byMsg[rec.Level+": "+rec.Msg]++
	if rec.Level == "ERROR" && len(c.errors) < 200 {
		c.errors = append(c.errors, string(line))
	}
}

// soakLogRecord is what the counts need of a log line.
type soakLogRecord struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Msg   string    `json:"msg"`
}

// slogText is a line of slog's default logger, which library code logging through the
// package-level functions writes to, whatever KIOKU_LOG_FORMAT says.
var slogText = regexp.MustCompile(`^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) ([A-Z]+) (.*?)(?: [a-z_]+=|$)`)

// parseLogLine reads a JSON log line or a line of slog's default logger.
func parseLogLine(line []byte) (soakLogRecord, bool) {
	var rec soakLogRecord
	if bytes.HasPrefix(line, []byte("{")) {
		return rec, json.Unmarshal(line, &rec) == nil && rec.Level != ""
	}
	m := slogText.FindSubmatch(line)
	if m == nil {
		return rec, false
	}
	at, err := time.ParseInLocation("2006/01/02 15:04:05", string(m[1]), time.Local)
	if err != nil {
		return rec, false
	}
	// The text line has whole seconds: it counts as logged at the end of its second.
	return soakLogRecord{Time: at.Add(time.Second), Level: string(m[2]), Msg: string(m[3])}, true
}

// counts returns the lines per level and the warnings and errors per message.
func (c *soakLogCounts) counts() (map[string]int, map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.levels), maps.Clone(c.byMsg)
}

// errorLines are the first error lines no fault explains; faultLines those faults do.
func (c *soakLogCounts) errorLines() string { return c.joined(func() []string { return c.errors }) }

func (c *soakLogCounts) faultLines() string {
	return c.joined(func() []string { return c.faultErrors })
}

func (c *soakLogCounts) joined(lines func() []string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(lines()) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, e := range lines() {
		fmt.Fprintf(&b, "\n\t%s", e)
	}
	return b.String()
}
