package fakediscord

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// sessionLog is every dispatch of a gateway session by sequence number, so a
// RESUME gets what the client missed replayed, as Discord does: events lost
// with a dropped connection, and events dispatched while no connection was up.
type sessionLog struct {
	mu     sync.Mutex
	events []loggedEvent
}

type loggedEvent struct {
	seq int64
	raw []byte
}

func (l *sessionLog) add(seq int64, raw []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, loggedEvent{seq: seq, raw: raw})
}

// dropThrough forgets the frames up to and including seq: the client has them, and a
// long-running test (the soak) must not keep every event it ever dispatched.
func (l *sessionLog) dropThrough(seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for i < len(l.events) && l.events[i].seq <= seq {
		i++
	}
	l.events = slices.Clone(l.events[i:])
}

// after returns the frames with a sequence number above seq, in order.
func (l *sessionLog) after(seq int64) [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][]byte
	for _, e := range l.events {
		if e.seq > seq {
			out = append(out, e.raw)
		}
	}
	return out
}

// queueLocked gives an event for a dropped session its sequence number and
// keeps it for the client's RESUME. f.mu must be held, which orders it with
// resume.
func (s *gatewaySession) queueLocked(eventType string, data json.RawMessage) error {
	seq := s.seq.Add(1)
	raw, err := json.Marshal(payload{Op: opDispatch, Data: data, Seq: &seq, Type: &eventType})
	if err != nil {
		return fmt.Errorf("fakediscord: couldn't encode %s: %w", eventType, err)
	}
	s.log.add(seq, raw)
	return nil
}

// Replayed returns how many events RESUMEs sent again because the client had
// not seen them.
func (f *Fake) Replayed() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.replayed
}
