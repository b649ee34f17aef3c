// Package metrics is what the operator scrapes, in Prometheus's format:
// requests by route and status with their latency, the database pool, the
// job queue's depth and age, jobs done and failed, the model calls by
// purpose, and, with a read replica (DATABASE_REPLICA_URL), the reads it
// could take by where they were served and why
// (mentor_db_reads_total{target,reason}), whether it is in service
// (mentor_db_replica_up) and how far it lags
// (mentor_db_replica_lag_seconds). Each app has a registry of its own, so
// that two apps in one process (the tests) count apart.
package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the app's instruments and the registry they are served
// from.
type Metrics struct {
	registry       *prometheus.Registry
	requests       *prometheus.CounterVec
	requestSeconds *prometheus.HistogramVec
	jobs           *prometheus.CounterVec
	modelCalls     *prometheus.CounterVec
	modelSeconds   *prometheus.HistogramVec
	modelTokens    *prometheus.CounterVec
	streamsOpen    prometheus.Gauge
	firstText      prometheus.Histogram
	dbReads        *prometheus.CounterVec
	replicaUp      prometheus.Gauge
	replicaLag     prometheus.Gauge
	// replicaSeen registers the replica's gauges at its first probe, so a
	// service without a replica shows none.
	replicaSeen sync.Once
}

// QueueStats is the job queue as one scrape sees it: for each kind, the
// jobs waiting and running, and how long the oldest due one has waited.
type QueueStats struct {
	Kind           string
	Queued         int
	Running        int
	OldestDueSince time.Duration
}

// QueueReader reads the queue's state across facilitators.
type QueueReader interface {
	QueueStats(ctx context.Context) ([]QueueStats, error)
}

// requestBuckets cover the service's requests, a read of a millisecond to
// a counselor's reply of half a minute.
var requestBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// modelBuckets cover model calls, an embedding's tenth of a second to a
// slow completion's minute.
var modelBuckets = []float64{.1, .25, .5, 1, 2, 4, 8, 15, 30, 60}

// queueReadTimeout bounds the queue's read at a scrape: a database that
// does not answer leaves the queue's figures out, not the scrape waiting.
const queueReadTimeout = 2 * time.Second

// New builds the instruments, with the pool's figures and the queue's read
// at each scrape (either may be nil: left out).
func New(pool *pgxpool.Pool, queue QueueReader, log *slog.Logger) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mentor_http_requests_total", Help: "Requests answered, by route, method and status.",
		}, []string{"route", "method", "status"}),
		requestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mentor_http_request_duration_seconds", Help: "Time to answer a request, by route and method.",
			Buckets: requestBuckets,
		}, []string{"route", "method"}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mentor_jobs_finished_total", Help: "Background jobs finished, by kind and outcome (done, retried, failed).",
		}, []string{"kind", "outcome"}),
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mentor_model_calls_total", Help: "Model calls, by purpose and outcome (ok, error).",
		}, []string{"purpose", "outcome"}),
		modelSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mentor_model_call_duration_seconds", Help: "Time a model call took, by purpose.", Buckets: modelBuckets,
		}, []string{"purpose"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mentor_model_tokens_total", Help: "Tokens the model reported using, by purpose.",
		}, []string{"purpose"}),
		streamsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mentor_counselor_streams_open", Help: "Counselor replies being streamed now.",
		}),
		firstText: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "mentor_counselor_first_text_seconds", Help: "Time from a streamed request to the first piece of its reply.",
			Buckets: modelBuckets,
		}),
		dbReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mentor_db_reads_total",
			Help: "Reads the read replica may answer, by the database that did (replica, primary) and why (fresh; replica_down, replica_lagging, own_write, token, replica_failed).",
		}, []string{"target", "reason"}),
		replicaUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mentor_db_replica_up", Help: "Whether the read replica answered its last probe as a standby (1) or not (0).",
		}),
		replicaLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mentor_db_replica_lag_seconds", Help: "How far the read replica's replay was behind the primary at the last probe that reached it (0: caught up).",
		}),
	}
	m.registry.MustRegister(m.requests, m.requestSeconds, m.jobs, m.modelCalls, m.modelSeconds, m.modelTokens,
		m.streamsOpen, m.firstText, m.dbReads,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if pool != nil {
		m.registry.MustRegister(poolCollector{pool})
	}
	if queue != nil {
		m.registry.MustRegister(queueCollector{queue: queue, log: log})
	}
	return m
}

// Handler serves the registry in Prometheus's text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// ObserveRequest counts an answered request; route is the route's
// pattern, never the path, so that ids do not make a series each.
func (m *Metrics) ObserveRequest(route, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.requestSeconds.WithLabelValues(route, method).Observe(took.Seconds())
}

// StreamOpened counts a counselor reply streamed from now until the
// returned func is called, when it ends.
func (m *Metrics) StreamOpened() (ended func()) {
	if m == nil {
		return func() {}
	}
	m.streamsOpen.Inc()
	return m.streamsOpen.Dec
}

// ObserveFirstText records how long a streamed reply took to send its
// first piece of text.
func (m *Metrics) ObserveFirstText(took time.Duration) {
	if m != nil {
		m.firstText.Observe(took.Seconds())
	}
}

// Outcomes of a background job.
const (
	JobDone    = "done"
	JobRetried = "retried"
	JobFailed  = "failed"
)

// ObserveJob counts a finished attempt of a job of kind.
func (m *Metrics) ObserveJob(kind, outcome string) {
	if m == nil {
		return
	}
	m.jobs.WithLabelValues(kind, outcome).Inc()
}

// ObserveModelCall counts a model call made for purpose (summary,
// extraction, consolidation, counselor, embeddings), with the tokens the
// model reported.
func (m *Metrics) ObserveModelCall(purpose string, took time.Duration, tokens int64, failed bool) {
	if m == nil {
		return
	}
	outcome := "ok"
	if failed {
		outcome = "error"
	}
	m.modelCalls.WithLabelValues(purpose, outcome).Inc()
	m.modelSeconds.WithLabelValues(purpose).Observe(took.Seconds())
	if tokens > 0 {
		m.modelTokens.WithLabelValues(purpose).Add(float64(tokens))
	}
}

// Where a read the replica may answer was served (target), and why
// (reason), for ObserveRead.
const (
	ReadOnReplica = "replica"
	ReadOnPrimary = "primary"

	// ReplicaFresh: the replica has replayed the caller's last write and
	// lags less than the bound.
	ReplicaFresh = "fresh"
	// ReplicaDown: its last probe, or a read, failed.
	ReplicaDown = "replica_down"
	// ReplicaLagging: it lags more than the bound, or has not been probed
	// for that long.
	ReplicaLagging = "replica_lagging"
	// OwnWrite: it has not replayed the caller's last write yet.
	OwnWrite = "own_write"
	// ConsistencyToken: it has not replayed the write named by the token
	// the request brought (a write this server process did not make, as
	// far as it knows).
	ConsistencyToken = "token"
	// ReplicaFailed: the read failed on the replica and was read again on
	// the primary.
	ReplicaFailed = "replica_failed"
)

// ObserveRead counts a read the replica may answer, served by target for
// reason.
func (m *Metrics) ObserveRead(target, reason string) {
	if m != nil {
		m.dbReads.WithLabelValues(target, reason).Inc()
	}
}

// ObserveReplica records what a probe of the replica found: whether it is
// in service, and how far behind the primary its replay was.
func (m *Metrics) ObserveReplica(up bool, lag time.Duration) {
	if m == nil {
		return
	}
	m.replicaSeen.Do(func() { m.registry.MustRegister(m.replicaUp, m.replicaLag) })
	m.replicaUp.Set(0)
	if up {
		m.replicaUp.Set(1)
	}
	m.replicaLag.Set(lag.Seconds())
}

// poolCollector reads the database pool's figures at each scrape.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolConns = prometheus.NewDesc("mentor_db_pool_connections",
		"Connections of the database pool, by state (acquired, idle, constructing).", []string{"state"}, nil)
	poolMax = prometheus.NewDesc("mentor_db_pool_max_connections",
		"The database pool's size.", nil, nil)
	poolAcquires = prometheus.NewDesc("mentor_db_pool_acquires_total",
		"Connections taken from the pool.", nil, nil)
	poolWaits = prometheus.NewDesc("mentor_db_pool_acquire_waits_total",
		"Takes that had to wait for a connection.", nil, nil)
	poolWaitSeconds = prometheus.NewDesc("mentor_db_pool_acquire_wait_seconds_total",
		"Time spent taking connections from the pool.", nil, nil)
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConns, poolMax, poolAcquires, poolWaits, poolWaitSeconds} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, prometheus.GaugeValue, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaits, prometheus.CounterValue, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitSeconds, prometheus.CounterValue, s.AcquireDuration().Seconds())
}

// queueCollector reads the job queue at each scrape.
type queueCollector struct {
	queue QueueReader
	log   *slog.Logger
}

var (
	queueJobs = prometheus.NewDesc("mentor_jobs_queued",
		"Background jobs not finished, by kind and state (queued, running).", []string{"kind", "state"}, nil)
	queueOldest = prometheus.NewDesc("mentor_jobs_oldest_due_seconds",
		"How long the oldest job due has waited, by kind (0: none waits).", []string{"kind"}, nil)
)

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- queueJobs
	ch <- queueOldest
}

func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueReadTimeout)
	defer cancel()
	stats, err := c.queue.QueueStats(ctx)
	if err != nil {
		c.log.Warn("the job queue could not be read for the metrics", "err", err)
		return
	}
	for _, s := range stats {
		ch <- prometheus.MustNewConstMetric(queueJobs, prometheus.GaugeValue, float64(s.Queued), s.Kind, "queued")
		ch <- prometheus.MustNewConstMetric(queueJobs, prometheus.GaugeValue, float64(s.Running), s.Kind, "running")
		ch <- prometheus.MustNewConstMetric(queueOldest, prometheus.GaugeValue, s.OldestDueSince.Seconds(), s.Kind)
	}
}
