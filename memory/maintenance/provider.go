package maintenance

import (
	"sync"
	"time"
)

// ProviderCounts are a process's model provider counters since it started (llm.Client's
// usage and recall's embedding status), as the process reads them now.
type ProviderCounts struct {
	Calls, Errors int64
	EmbedModel    string
	EmbedDown     bool
	EmbedFailedAt time.Time
}

// DefaultProviderWindow is how far back the provider's success rate looks: long enough to
// hold a few maintenance runs' worth of calls, short enough that an outage that ended an
// hour ago no longer counts against the score.
const DefaultProviderWindow = time.Hour

// maxProviderSamples bounds the samples a window keeps however often it is read.
const maxProviderSamples = 256

// ProviderWindow turns a process's cumulative counters into recent ones: each Observe
// keeps a sample, and the rate is taken against the newest sample at least span old (or
// the process start, when the counters were zero). Safe for concurrent use.
type ProviderWindow struct {
	mu      sync.Mutex
	span    time.Duration
	started time.Time
	samples []providerSample
}

type providerSample struct {
	at            time.Time
	calls, errors int64
}

// NewProviderWindow returns a window of span (DefaultProviderWindow when not positive)
// for counters that were zero at started.
func NewProviderWindow(span time.Duration, started time.Time) *ProviderWindow {
	if span <= 0 {
		span = DefaultProviderWindow
	}
	return &ProviderWindow{span: span, started: started}
}

// Observe records counters c read at now and returns the provider's recent state.
func (w *ProviderWindow) Observe(now time.Time, c ProviderCounts) Provider {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, providerSample{at: now, calls: c.Calls, errors: c.Errors})
	cut := now.Add(-w.span)
	// Keep the newest sample at or before the cut as the baseline; drop the older ones.
	keep := 0
	for i, s := range w.samples {
		if !s.at.After(cut) {
			keep = i
		}
	}
	if extra := len(w.samples) - maxProviderSamples; extra > keep {
		keep = extra
	}
	w.samples = w.samples[keep:]
	base := providerSample{at: w.started}
	if first := w.samples[0]; !first.at.After(cut) || len(w.samples) == maxProviderSamples {
		base = first
	}
	p := Provider{Known: true, Window: now.Sub(base.at), Calls: c.Calls - base.calls, Errors: c.Errors - base.errors,
		EmbedModel: c.EmbedModel, EmbedDown: c.EmbedDown, EmbedFailedAt: c.EmbedFailedAt}
	if p.Calls < 0 || p.Errors < 0 {
		// The counters restarted: all they hold is recent.
		p.Calls, p.Errors, p.Window = c.Calls, c.Errors, now.Sub(w.started)
	}
	return p
}
