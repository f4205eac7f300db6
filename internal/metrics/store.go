package metrics

import "github.com/prometheus/client_golang/prometheus"

// StoreSources say which store the bot runs on and, for one with a connection pool
// (PostgreSQL), how the pool stands; Metrics.WatchStore sets them.
type StoreSources struct {
	// Kind is the store's kind: "sqlite" or "postgres".
	Kind string
	// Pool reads the connection pool; nil for a store without one to report.
	Pool func() PoolStats
}

// PoolStats is a connection pool at one moment (pgxpool's Stat).
type PoolStats struct {
	// Idle and InUse are the open connections by state; Max the most the pool opens.
	Idle, InUse, Max int64
	// Acquires counts connections taken from the pool since the start.
	Acquires int64
}

// WatchStore sets what the store series read at scrape time. It may be called while the
// handler serves.
func (m *Metrics) WatchStore(src StoreSources) { m.store.Store(&src) }

// storeCollector reports the store kind and its pool.
type storeCollector struct {
	m                              *Metrics
	info, conns, maxConns, acquire *prometheus.Desc
}

func newStoreCollector(m *Metrics) *storeCollector {
	name := func(n string) string { return prometheus.BuildFQName(namespace, "", n) }
	return &storeCollector{m: m,
		info: prometheus.NewDesc(name("store_info"), "1, labelled with the kind of store the bot runs on (sqlite, postgres).",
			[]string{"store"}, nil),
		conns: prometheus.NewDesc(name("db_pool_connections"), "Open database connections by state (idle, in_use); PostgreSQL only.",
			[]string{"state"}, nil),
		maxConns: prometheus.NewDesc(name("db_pool_max_connections"), "The most connections the database pool opens; PostgreSQL only.",
			nil, nil),
		acquire: prometheus.NewDesc(name("db_pool_acquires_total"), "Connections taken from the database pool; PostgreSQL only.",
			nil, nil),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.conns, c.maxConns, c.acquire} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.store.Load()
	if src == nil {
		return
	}
	if src.Kind != "" {
		ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, src.Kind)
	}
	if src.Pool == nil {
		return
	}
	p := src.Pool()
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(p.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(p.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(c.maxConns, prometheus.GaugeValue, float64(p.Max))
	ch <- prometheus.MustNewConstMetric(c.acquire, prometheus.CounterValue, float64(p.Acquires))
}
