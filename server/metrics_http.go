package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsServer is the HTTP side of metrics-addr: net/http on its own
// goroutines, never on a shard's thread.
type metricsServer struct {
	ln  net.Listener
	srv *http.Server
}

// startMetrics listens on addr and serves /metrics: the shards' figures
// (metricsCollector) and the Go runtime's and the process's.
func (s *Server) startMetrics(addr string) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newMetricsCollector(s, scrapeShardTimeout),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            promLogger{s},
		MaxRequestsInFlight: 4, // each scrape asks every shard for a snapshot
	}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics-addr: %w", err)
	}
	m := &metricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	s.metrics = m
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics endpoint stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	s.log.Info("serving Prometheus metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return nil
}

// stopMetrics closes the endpoint, waiting (briefly) for scrapes in
// flight: they must not outlive the shards they ask.
func (s *Server) stopMetrics() {
	if s.metrics == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), scrapeShardTimeout+time.Second)
	defer cancel()
	if err := s.metrics.srv.Shutdown(ctx); err != nil {
		s.metrics.srv.Close()
	}
}

// MetricsAddr is the address /metrics listens on ("" when off), with the
// port the system gave when metrics-addr asked for port 0.
func (s *Server) MetricsAddr() string {
	if s.metrics == nil {
		return ""
	}
	return s.metrics.ln.Addr().String()
}

// promLogger sends promhttp's errors to the server's log.
type promLogger struct{ s *Server }

func (l promLogger) Println(v ...any) { l.s.log.Error("metrics: " + fmt.Sprint(v...)) }
