//go:build soak

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"
)

// soakEngine is what a run needs of the engine under test and the processes on it.
type soakEngine struct {
	name      string
	processes int
	db        *soakDB
	// usage is the heap in use (after a full collection), goroutines and open files of the
	// bot's processes together; ok is false while one of them is down.
	usage func() (u soakUsage, ok bool)
	// healthy reports whether the process of a shard answers /healthz.
	healthy func(shard int) bool
	// conns counts the database connections the processes hold (nil: not counted).
	conns func() int
	// deadOwners are the lease owner prefixes of processes that were killed: their
	// leases wait until they expire.
	deadOwners func() []string
	faults     []*soakFault
	// stop stops the bot's processes, each of which must end cleanly.
	stop func()
}

// soakEnds is what run measured at the baseline after warm-up and at the end.
type soakEnds struct {
	start, end           soakUsage
	memStart, memEnd     int
	connsStart, connsEnd int
	elapsed              time.Duration
	samples              []soakHeapSample
}

// run drives the load against e: warm-up, a baseline, duration of conversations with the
// faults and forget-mes spread over it and samples taken through it, a drain and the end
// measurements; then it prints the report and fails the test on what is wrong.
func (s *soak) run(e *soakEngine, guilds int, duration time.Duration) {
	collectCtx, stopCollect := context.WithCancel(context.Background())
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		s.collect(collectCtx)
	}()
	defer func() { stopCollect(); <-collected }()
	stopOnce := sync.OnceFunc(func() { close(s.stop) })
	defer stopOnce()

	m, finish := s.load(e, duration)
	r := soakReport{Engine: e.name, Processes: e.processes, Conversations: len(s.conversations()), Guilds: guilds,
		ChatCalls: s.chatCalls.Load(), ExtractCalls: s.extractCalls.Load(), DecideCalls: s.decideCalls.Load()}
	finish()
	stopOnce()
	e.stop()
	stopCollect()
	<-collected

	errs := s.report(e, m, &r)
	s.bound(r, m, errs)
}

// load runs the conversations from warm-up to the deadline, with the faults, forget-mes
// and samples, and measures both ends; finish lets the conversations' goroutines end.
func (s *soak) load(e *soakEngine, duration time.Duration) (m soakEnds, finish func()) {
	convs := s.conversations()
	var deadline time.Time
	var finished sync.WaitGroup
	release, done := make(chan struct{}), make(chan struct{})
	releaseOnce, finish := sync.OnceFunc(func() { close(release) }), sync.OnceFunc(func() { close(done) })
	// A test stopped early still lets its conversations end.
	defer releaseOnce()
	s.warm.Add(len(convs))
	finished.Add(len(convs))
	for _, c := range convs {
		go func() {
			s.converse(c, release, func() time.Time { return deadline })
			finished.Done()
			// Kept until the end is measured, as at the baseline.
			<-done
		}()
	}
	s.warm.Wait()
	m.start, m.memStart, m.connsStart = s.measure(e, ".start")
	s.began = time.Now()
	deadline = s.began.Add(duration)
	releaseOnce()
	var background sync.WaitGroup
	background.Go(func() { s.runFaults(e.faults, duration, e.healthy) })
	background.Go(func() { s.scheduleForgets(soakForgetsEvery(duration), duration) })
	m.samples = s.sample(e, duration/soakSamples, finished.Wait)
	m.elapsed = time.Since(s.began)
	background.Wait()
	m.end, m.memEnd, m.connsEnd = s.measure(e, "")
	m.samples = append(m.samples, soakHeapSample{AtS: round2(time.Since(s.began).Seconds()), heap: m.end.Heap, Memories: m.memEnd})
	return m, finish
}

// measure drains the pipeline and reads the processes' usage, the live memories and the
// database connections; with -soak.heapprofile it writes a profile named with suffix.
func (s *soak) measure(e *soakEngine, suffix string) (u soakUsage, memories, conns int) {
	s.drain(e)
	u, ok := e.usage()
	if !ok {
		s.t.Fatal("a process did not report its heap, goroutines and open files")
	}
	if e.conns != nil {
		conns = e.conns()
	}
	if *soakHeapProfile != "" && e.processes == 1 {
		writeHeapProfile(s.t, *soakHeapProfile+suffix)
	}
	return u, e.db.liveMemories(), conns
}

// report fills in r from the run and the database and returns what went wrong.
func (s *soak) report(e *soakEngine, m soakEnds, r *soakReport) map[string]int {
	r.DurationS, r.HeapStartMB, r.HeapEndMB = round2(m.elapsed.Seconds()), round2(mb(m.start.Heap)), round2(mb(m.end.Heap))
	r.GoroutinesStart, r.GoroutinesEnd, r.FDsStart, r.FDsEnd = m.start.Goroutines, m.end.Goroutines, m.start.FDs, m.end.FDs
	r.MemoriesStart, r.DBConnsStart, r.DBConnsEnd = m.memStart, m.connsStart, m.connsEnd
	grown := float64(m.end.Heap) - float64(m.start.Heap)
	if stored := m.memEnd - m.memStart; stored > 0 {
		r.HeapPerMemoryB = round2(grown / float64(stored))
	}
	for _, sm := range m.samples {
		sm.HeapMB = round2(mb(sm.heap))
		if stored := sm.Memories - m.memStart; stored > 0 {
			sm.HeapPerMemoryB = round2((float64(sm.heap) - float64(m.start.Heap)) / float64(stored))
		}
		unexplained := float64(sm.heap) - float64(m.start.Heap) - r.HeapPerMemoryB*float64(sm.Memories-m.memStart)
		sm.UnexplainedMB = round2(unexplained / (1 << 20))
		r.HeapSamples = append(r.HeapSamples, sm)
	}
	s.mu.Lock()
	r.Turns = s.turns
	r.TurnsPerS = round2(float64(s.turns) / m.elapsed.Seconds())
	r.OverheadP50Ms, r.OverheadP99Ms = s.overhead.quantileMs(0.50), s.overhead.quantileMs(0.99)
	r.LatencyP50Ms, r.LatencyP99Ms = s.latency.quantileMs(0.50), s.latency.quantileMs(0.99)
	r.Lost = len(s.pending)
	r.Late, r.DuplicateReplies, r.RefusedTurns, r.KilledInFlight = s.late, s.duplicates, s.refused, s.killedInFlight
	r.ForgetMes, r.Deletes = s.forgetMes, s.deletes
	errs := maps.Clone(s.errs)
	s.mu.Unlock()
	s.faultMu.Lock()
	r.Faults = s.faults
	s.faultMu.Unlock()

	for what, n := range s.checkDatabase(e, r) {
		errs[what] += n
	}
	levels, _ := s.logs.counts()
	if n := levels["ERROR"]; n > 0 {
		errs["kioku logged an error no fault explains"] += n
	}
	r.Warnings = levels["WARN"]
	for _, n := range errs {
		r.Errors += n
	}
	return errs
}

// bound fails the test on what the report shows wrong: errors, lost or duplicated replies
// and memories, jobs run twice, growth of goroutines or open files, and heap growth that
// the memories stored meanwhile do not explain.
func (s *soak) bound(r soakReport, m soakEnds, errs map[string]int) {
	t, start, end, stored := s.t, m.start, m.end, m.memEnd-m.memStart
	// Printed, not logged: the line is the run's output, to be read by tools.
	line, _ := json.Marshal(r)
	fmt.Println(string(line))
	_, byMsg := s.logs.counts()
	if len(errs) > 0 {
		t.Errorf("errors: %v; kioku's error lines: %s", errs, s.logs.errorLines())
	}
	if len(byMsg) > 0 {
		t.Logf("warnings and errors by message: %v", byMsg)
	}
	if len(errs) > 0 {
		t.Logf("the first error lines faults explain: %s", s.logs.faultLines())
	}
	if r.Lost > 0 || r.DuplicateReplies > 0 || r.DuplicateMemories > 0 || r.JobsRunTwice > 0 {
		t.Errorf("%d lost messages, %d duplicate replies, %d duplicate memories, %d jobs run twice",
			r.Lost, r.DuplicateReplies, r.DuplicateMemories, r.JobsRunTwice)
	}
	if r.Turns == 0 {
		t.Errorf("no turn was made after warm-up")
	}
	if end.Goroutines > start.Goroutines+soakGoroutineSlack {
		t.Errorf("goroutines grew from %d to %d (bound +%d)", start.Goroutines, end.Goroutines, soakGoroutineSlack)
	}
	if end.FDs > start.FDs+soakFDSlack {
		t.Errorf("open files grew from %d to %d (bound +%d)", start.FDs, end.FDs, soakFDSlack)
	}
	if r.DBConnsEnd > r.DBConnsStart+soakConnSlack {
		t.Errorf("database connections grew from %d to %d (bound +%d)", r.DBConnsStart, r.DBConnsEnd, soakConnSlack)
	}
	grown := float64(end.Heap) - float64(start.Heap)
	if bound := float64(soakHeapSlack) + soakHeapPerMemory*float64(max(0, stored)); grown > bound {
		t.Errorf("heap in use grew by %.1f MB (from %.1f MB) while %d memories were stored: more than %.1f MB (%d bytes a memory + %d MB)",
			grown/(1<<20), mb(start.Heap), stored, bound/(1<<20), soakHeapPerMemory, soakHeapSlack>>20)
	}
}

// sample takes a soakHeapSample every every until wait returns, skipping moments when a
// process is down.
func (s *soak) sample(e *soakEngine, every time.Duration, wait func()) []soakHeapSample {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	var out []soakHeapSample
	tick := time.NewTicker(max(every, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return out
		case <-tick.C:
			if u, ok := e.usage(); ok {
				out = append(out, soakHeapSample{AtS: round2(time.Since(s.began).Seconds()), heap: u.Heap, Memories: e.db.liveMemories()})
			}
		}
	}
}

// soakForgetsEvery is how often a member does a forget-me: every 30 s in a long run, six
// times in a short one.
func soakForgetsEvery(d time.Duration) time.Duration {
	return min(max(d/6, 3*time.Second), 30*time.Second)
}
