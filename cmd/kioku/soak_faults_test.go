//go:build soak

package main

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// soakFault is one fault the run injects once, in the middle of the load.
type soakFault struct {
	name string
	// lasts is how long the fault holds before heal undoes it; 0 for a fault of a moment.
	lasts time.Duration
	// inject starts the fault; it may fill in the run's detail and counts.
	inject func(run *soakFaultRun) error
	// heal ends it (nil: nothing to undo, the bot must recover on its own).
	heal func(run *soakFaultRun) error
	// back, when set, is a further condition of recovery besides every process being
	// healthy and answering a turn (the change feed listening again).
	back func() bool
}

// soakFaultRun is what one fault did, for the report. Recovery is measured from the end of
// the fault (its injection for a fault of a moment, the restart for a killed process)
// until every process answers /healthz and a turn of its shard is answered.
type soakFaultRun struct {
	Name           string  `json:"name"`
	AtS            float64 `json:"at_s"`
	LastedS        float64 `json:"lasted_s"`
	RecoveryS      float64 `json:"recovery_s"`
	Refused        int     `json:"refused_turns"`
	KilledInFlight int     `json:"killed_in_flight,omitempty"`
	LogErrors      int     `json:"log_errors"`
	Detail         string  `json:"detail,omitempty"`

	mu                         sync.Mutex
	injected, ended, recovered time.Time
}

func (f *soakFaultRun) refusedTurn() {
	f.mu.Lock()
	f.Refused++
	f.mu.Unlock()
}

// faultAt returns the fault that explains what went wrong at at with something sent at
// sent (zero for a log line): one injected by then, and not recovered before sent nor
// more than soakFaultGrace before at (turns and jobs under way when it recovered end
// shortly after); the latest such fault when several are. Nil when none does.
func (s *soak) faultAt(sent, at time.Time) *soakFaultRun {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for _, f := range slices.Backward(s.faults) {
		f.mu.Lock()
		in := !f.injected.After(at) && (f.recovered.IsZero() ||
			(at.Before(f.recovered.Add(soakFaultGrace)) && (sent.IsZero() || !sent.After(f.recovered))))
		f.mu.Unlock()
		if in {
			return f
		}
	}
	return nil
}

// runFaults injects each fault once, evenly spread over the run, each after the previous
// one recovered, and measures its recovery. healthy reports whether the process of a shard
// answers /healthz.
func (s *soak) runFaults(faults []*soakFault, duration time.Duration, healthy func(shard int) bool) {
	for i, f := range faults {
		at := s.began.Add(duration * time.Duration(i+1) / time.Duration(len(faults)+1))
		select {
		case <-s.stop:
			return
		case <-time.After(time.Until(at)):
		}
		run := &soakFaultRun{Name: f.name}
		s.faultMu.Lock()
		s.faults = append(s.faults, run)
		s.faultMu.Unlock()
		run.mu.Lock()
		run.injected = time.Now()
		run.AtS = round2(run.injected.Sub(s.began).Seconds())
		run.mu.Unlock()
		if err := f.inject(run); err != nil {
			s.fail(fmt.Sprintf("couldn't inject fault %s: %v", f.name, err))
		}
		time.Sleep(f.lasts)
		if f.heal != nil {
			if err := f.heal(run); err != nil {
				s.fail(fmt.Sprintf("couldn't end fault %s: %v", f.name, err))
			}
		}
		run.mu.Lock()
		run.ended = time.Now()
		run.LastedS = round2(run.ended.Sub(run.injected).Seconds())
		run.mu.Unlock()
		s.awaitRecovery(run, f.back, healthy)
	}
}

// awaitRecovery waits until every shard's process is healthy and answers a probe turn (and
// f's own condition holds), at most soakRecoveryBound after the fault ended.
func (s *soak) awaitRecovery(run *soakFaultRun, back func() bool, healthy func(shard int) bool) {
	deadline := run.ended.Add(soakRecoveryBound)
	for shard := range s.shards {
		for !(healthy(shard) && (back == nil || back()) && s.probe(shard)) {
			if time.Now().After(deadline) {
				s.fail(fmt.Sprintf("%s: shard %d not healthy and answering within %v", run.Name, shard, soakRecoveryBound))
				break
			}
			select {
			case <-s.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	run.recovered = time.Now()
	run.RecoveryS = round2(run.recovered.Sub(run.ended).Seconds())
}

// probe sends one turn of shard's probe conversation and reports whether it was answered.
func (s *soak) probe(shard int) bool {
	c := s.probes[shard]
	c.mu.Lock()
	k := len(c.turns)
	c.mu.Unlock()
	token := fmt.Sprintf("%d-%d", c.id, k)
	return s.send(c, k, token, s.message(c, fmt.Sprintf("I like topic %s a lot", token)), false) == outcomeAnswered
}

// scheduleForgets asks the conversations in turn for a forget-me every every until the
// deadline, spreading them over places and shards.
func (s *soak) scheduleForgets(every, lasting time.Duration) {
	convs := s.conversations()
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := time.After(lasting - every/2)
	for i := 0; ; i++ {
		select {
		case <-s.stop:
			return
		case <-end:
			return
		case <-tick.C:
			convs[(i*7)%len(convs)].forgetWanted.Store(true)
		}
	}
}

// modelOutage is the model endpoint answering 500 to every call for a while.
func (s *soak) modelOutage(lasts time.Duration) *soakFault {
	return &soakFault{name: "model_outage", lasts: lasts,
		inject: func(*soakFaultRun) error { s.modelDown.Store(true); return nil },
		heal: func(run *soakFaultRun) error {
			s.modelDown.Store(false)
			run.Detail = fmt.Sprintf("%d model calls answered 500", s.failed.Load())
			return nil
		}}
}

// soakOutageFor is how long the model fails: a minute in an hour's run, a tenth of a
// shorter one, at least 5 s.
func soakOutageFor(d time.Duration) time.Duration {
	return min(max(d/10, 5*time.Second), time.Minute)
}
