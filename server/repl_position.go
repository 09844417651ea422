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

// The server's place in a replication history across its own restart,
// as Redis keeps its replid and offset in the RDB it saves at shutdown.
// At a clean shutdown of a server that persists its data (appendonly yes),
// once every WAL is sealed, the data is exactly a stream up to an offset,
// and that position is written to replPositionFile:
//   - a replica's, when its link stopped at a clean point
//     (replication.Link.Position: every command it read answered, so in
//     the WAL): its master's replid and offset;
//   - a master's own (master_restart.go), when its history is sound (the
//     shards' feeds on, so every write up to the offset is in the
//     stream): its replid and master_repl_offset.
//
// The boot takes the file (reads and removes it, durably) before anything
// can write. A replica's first PSYNC asks to continue from the position
// (a master's own too, when it boots as a replica: Redis's
// replicationCacheMasterUsingMyself); a master booting as a master goes on
// with its own history (replid and offset kept). A master that no longer
// holds an offset answers with a full sync, as it would anyway. After a
// crash there is no file: the shards' WALs recover each to its own point,
// which is no prefix of the stream, so only a full sync is sound then.

// replPositionFile is the file, in the data directory. It holds one line,
// "<replid> <offset> <db>" for a replica's position, with " master" after
// it for a master's own (a file without it, as older versions wrote,
// is a replica's).
const replPositionFile = "replication-position"

// ownMark is the file's fourth field on a master's own position.
const ownMark = "master"

// savedPosition is the position a clean shutdown saved.
type savedPosition struct {
	replication.Position
	// own: the server's own history as a master (its replid and
	// master_repl_offset), not its master's.
	own bool
}

// String is the file's line.
func (p savedPosition) String() string {
	line := fmt.Sprintf("%s %d %d", p.ReplID, p.Offset, p.DB)
	if p.own {
		line += " " + ownMark
	}
	return line + "\n"
}

// parseSavedPosition reads the file's line.
func parseSavedPosition(data string) (savedPosition, error) {
	var p savedPosition
	f := strings.Fields(data)
	if len(f) == 4 && f[3] == ownMark {
		p.own, f = true, f[:3]
	}
	if len(f) != 3 {
		return p, fmt.Errorf("malformed position %q", data)
	}
	if _, err := fmt.Sscanf(strings.Join(f, " "), "%s %d %d", &p.ReplID, &p.Offset, &p.DB); err != nil {
		return p, fmt.Errorf("malformed position %q: %w", data, err)
	}
	if len(p.ReplID) != 40 || p.Offset < 0 || p.DB < 0 {
		return p, fmt.Errorf("invalid position %q", data)
	}
	return p, nil
}

// saveReplPosition writes p to the data directory, atomically and durably.
func (s *Server) saveReplPosition(p savedPosition) error {
	if err := vfs.NewAtomicWrite(s.cfg.Dir, replPositionFile, []byte(p.String())).Run(vfs.Default); err != nil {
		return fmt.Errorf("save the replication position: %w", err)
	}
	return nil
}

// takeReplPosition reads the position a clean shutdown saved and removes
// the file durably, so that a later crash cannot find it over data that
// moved on; ok is false when there is none (or it cannot be read, which
// is logged: a full sync follows).
func (s *Server) takeReplPosition() (p savedPosition, ok bool) {
	path := filepath.Join(s.cfg.Dir, replPositionFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p, false
	}
	if err == nil {
		p, err = parseSavedPosition(string(data))
	}
	if rmErr := os.Remove(path); rmErr == nil {
		rmErr = vfs.SyncDir(vfs.Default, s.cfg.Dir)
		err = errors.Join(err, rmErr)
	} else if !errors.Is(rmErr, fs.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	if err != nil {
		s.log.Warn("replication position of the last shutdown not used: a full sync follows", "file", path, "err", err)
		return savedPosition{}, false
	}
	return p, true
}
