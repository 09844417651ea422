package server

import (
	"sync"

	"github.com/moond-db/moond/resp"
	"github.com/moond-db/moond/server/config"
)

// rewriteMu serializes CONFIG REWRITEs: each writes the whole file.
var rewriteMu sync.Mutex

// configRewrite is CONFIG REWRITE: the config file the server started
// from gets the running configuration (config.Rewrite). The file is
// written and synced off the shard's thread, which goes on serving; the
// reply comes back to it when the new file is in place.
func configRewrite(c *conn) {
	srv := c.w.srv
	srv.cfgMu.RLock()
	cfg := srv.cfg.Clone()
	srv.cfgMu.RUnlock()
	if cfg.File == "" {
		c.errorReply("ERR The server is running without a config file")
		return
	}
	w, proto := c.w, c.out.Proto
	reply := c.newPending(1, nil)
	go func() {
		rewriteMu.Lock()
		err := config.Rewrite(cfg.File, cfg)
		rewriteMu.Unlock()
		if err != nil {
			srv.log.Error("CONFIG REWRITE failed", "file", cfg.File, "err", err)
		}
		_ = w.loop.Post(func() {
			out := resp.Writer{Proto: proto}
			if err != nil {
				msg := "ERR Rewriting config file: " + err.Error()
				w.countError(msg)
				out.Error(msg)
			} else {
				out.SimpleString("OK")
			}
			reply.fill(0, out.Buf)
			c.delivered()
		})
	}()
}
