package server

import (
	"fmt"
	"time"

	"github.com/moond-db/moond/keyspace"
	"github.com/moond-db/moond/shard"
)

// The LOADING state: moond listens as soon as it starts and the shards
// recover their data while their loops serve connections. Until every
// shard has loaded, a command without Redis's "loading" flag answers
// loadingError; PING, INFO, CONFIG, CLIENT, HELLO, AUTH and the others
// that carry the flag run, and INFO persistence reports the progress.
// The state is server-wide (one atomic), so a command on a shard that has
// loaded but whose keys live on one still loading is refused as well,
// never queued behind the recovery.

// loadingError is Redis's reply to a command refused while it loads.
const loadingError = "LOADING Redis is loading the dataset in memory"

// loadProgressLogEvery is how often the log reports the load's progress.
const loadProgressLogEvery = 5 * time.Second

// allowedWhileLoading reports whether cmd, a command or a container's
// subcommand entry (its own flags: SLOWLOG GET runs, FUNCTION LOAD not),
// runs while the shards load: Redis's "loading" flag in its command table.
// CLIENT, CONFIG and PUBSUB themselves run: every subcommand of theirs
// carries the flag in Redis 7.0. PING runs too, though Redis refuses it
// while it loads: health checks and load balancers must see a live server
// (the issue asks for it).
func allowedWhileLoading(cmd *command) bool {
	switch cmd.name {
	case "ping", "client", "config", "pubsub":
		return true
	}
	spec := cmd.flagSpec()
	return spec != nil && hasFlag(spec, "loading")
}

func serverSpec(name string) *keyspace.CommandSpec {
	for _, s := range serverSpecs {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func hasFlag(spec *keyspace.CommandSpec, flag string) bool {
	for _, f := range spec.Flags {
		if f == flag {
			return true
		}
	}
	return false
}

// Loaded is closed once every shard has loaded its data, or one's boot
// failed (LoadErr says which). Until then the server answers LOADING.
func (s *Server) Loaded() <-chan struct{} { return s.loaded }

// LoadErr is the first error a shard's boot failed with, or nil once
// every shard loaded. Valid once Loaded is closed.
func (s *Server) LoadErr() error {
	<-s.loaded
	return s.loadErr
}

// bootShards starts the boot and returns: a goroutine reshards the data
// directory first when it holds another number of shards (reshard.go),
// starts every shard's recovery on its loop, logs the progress meanwhile,
// and ends the LOADING state (or records the failure) once every shard
// answered.
func (s *Server) bootShards() {
	restoreGC := bootGC(s.cfg.Dir) // see bootgc.go
	s.booting = true
	go func() {
		defer close(s.loaded)
		defer restoreGC()
		if s.reshardFrom != 0 {
			if err := s.reshard(); err != nil {
				s.loadErr = err
				return
			}
		}
		if len(s.workers) > 1 { // one shard decides its parts as it replays
			s.startDecidingTxns(len(s.workers), s.shardOptions)
		}
		s.loadErr = s.collectBoots(s.startBoots())
		if s.loadErr != nil {
			return
		}
		_, total := s.loadedBytes()
		s.log.Info("DB loaded from disk", "seconds", fmt.Sprintf("%.3f", time.Since(s.loadStart).Seconds()), "bytes", total)
		resume := s.bootPosition() // before anything writes
		s.loading.Store(false)
		s.startConfiguredReplication(resume)
	}()
}

// startBoots starts every shard's recovery on its loop; each answers on
// the channel.
func (s *Server) startBoots() <-chan error {
	errs := make(chan error, len(s.workers))
	for _, w := range s.workers {
		o := s.shardOptions(w.id)
		o.Progress = s.progress[w.id]
		if err := w.loop.Post(func() { w.boot(o, func(err error) { errs <- err }) }); err != nil {
			errs <- fmt.Errorf("shard %d: boot: %w", w.id, err)
		}
	}
	return errs
}

// collectBoots waits for every shard's boot, logging the load's progress
// meanwhile, and returns the first error.
func (s *Server) collectBoots(errs <-chan error) error {
	var first error
	tick := time.NewTicker(loadProgressLogEvery)
	defer tick.Stop()
	for n := 0; n < len(s.workers); {
		select {
		case err := <-errs:
			n++
			if err != nil && first == nil {
				first = err
			}
		case <-tick.C:
			st := s.loadingStatus(time.Now())
			s.log.Info("loading the dataset", "loaded_bytes", st.loaded, "total_bytes", st.total,
				"perc", fmt.Sprintf("%.2f", st.perc), "eta_seconds", st.eta)
		}
	}
	return first
}

// loadedBytes sums the shards' load progress.
func (s *Server) loadedBytes() (loaded, total int64) {
	for _, p := range s.progress {
		l, t := p.Bytes()
		loaded += l
		total += t
	}
	return loaded, total
}

// loadingStatus is INFO's view of the load, computed as Redis 7.0's
// genRedisInfoString does.
type loadingStatus struct {
	start         time.Time
	loaded, total int64
	perc          float64
	eta           int64
}

func (s *Server) loadingStatus(now time.Time) loadingStatus {
	st := loadingStatus{start: s.loadStart}
	st.loaded, st.total = s.loadedBytes()
	remaining := int64(1)
	if st.total > 0 {
		st.perc = float64(st.loaded) / float64(st.total) * 100
		remaining = st.total - st.loaded
	}
	if elapsed := int64(now.Sub(s.loadStart) / time.Second); elapsed == 0 {
		st.eta = 1 // Redis's stand-in before a second has passed
	} else {
		st.eta = elapsed * remaining / (st.loaded + 1)
	}
	return st
}

// writeInfoLoading writes INFO persistence's loading_* fields, which Redis
// shows only while it loads.
func (s *Server) writeInfoLoading(kv func(string, any), now time.Time) {
	st := s.loadingStatus(now)
	kv("loading_start_time", st.start.Unix())
	kv("loading_total_bytes", st.total)
	kv("loading_rdb_used_mem", 0)
	kv("loading_loaded_bytes", st.loaded)
	kv("loading_loaded_perc", fmt.Sprintf("%.2f", st.perc))
	kv("loading_eta_seconds", st.eta)
}

// newLoadProgress is one progress record per shard, for INFO to read from
// any thread while the shards load.
func newLoadProgress(n int) []*shard.LoadProgress {
	p := make([]*shard.LoadProgress, n)
	for i := range p {
		p[i] = new(shard.LoadProgress)
	}
	return p
}
