package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/moond-db/moond/persistence/vfs"
	"github.com/moond-db/moond/replication"
)

// A replica's place in its master's history across its own restart, as
// Redis keeps its replid and offset in the RDB it saves at shutdown. At a
// clean shutdown of a replica that persists its data (appendonly yes)
// and whose link stopped at a clean point
// (replication.Link.Position: every command it read answered, so in the
// WAL), once every WAL is sealed, the position is written to
// replPositionFile: the data is then exactly the master's stream up to
// that offset. The boot takes the file (reads and removes it, durably)
// before anything can write, and the link's first PSYNC asks to continue
// from there; a master that no longer holds that offset answers with a
// full sync, as it would anyway. After a crash there is no file: the
// shards' WALs recover each to its own point, which is no prefix of the
// stream, so only a full sync is sound then.

// replPositionFile is the file, in the data directory.
const replPositionFile = "replication-position"

// saveReplPosition writes p to the data directory, atomically and durably.
func (s *Server) saveReplPosition(p replication.Position) error {
	data := fmt.Sprintf("%s %d %d\n", p.ReplID, p.Offset, p.DB)
	if err := vfs.NewAtomicWrite(s.cfg.Dir, replPositionFile, []byte(data)).Run(vfs.Default); err != nil {
		return fmt.Errorf("save the replication position: %w", err)
	}
	return nil
}

// takeReplPosition reads the position a clean shutdown saved and removes
// the file durably, so that a later crash cannot find it over data that
// moved on; ok is false when there is none (or it cannot be read, which
// is logged: a full sync follows).
func (s *Server) takeReplPosition() (p replication.Position, ok bool) {
	path := filepath.Join(s.cfg.Dir, replPositionFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, false
	}
	if err == nil {
		_, err = fmt.Sscanf(strings.TrimSpace(string(data)), "%s %d %d", &p.ReplID, &p.Offset, &p.DB)
	}
	if rmErr := os.Remove(path); rmErr == nil {
		rmErr = vfs.SyncDir(vfs.Default, s.cfg.Dir)
		err = errors.Join(err, rmErr)
	} else if !errors.Is(rmErr, fs.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	if err != nil || len(p.ReplID) != 40 || p.Offset < 0 {
		s.log.Warn("replication position of the last shutdown not used: a full sync follows", "file", path, "err", err)
		return replication.Position{}, false
	}
	return p, true
}
