package heap

import "fmt"

// DeferredFrees holds the records that may be freed only once a
// checkpoint has finalized: the old versions of keys whose new version a
// checkpoint wrote. Each is filed under that checkpoint (its redo LSN,
// which identifies it: a checkpoint that flushes again keeps its redo
// point), and Release hands back, after a checkpoint finalized, every
// record filed under it or an earlier one.
//
// Invariant (asserted): checkpoints are filed in non-decreasing order, as
// a shard runs one checkpoint at a time and redo LSNs only grow.
//
// At boot, old versions that Index found superseded can be filed under the
// published redo point: the next checkpoint to finalize releases them.
type DeferredFrees struct {
	batches []deferredBatch // ascending checkpoint
	n       int
}

type deferredBatch struct {
	checkpoint uint64
	ids        []RecordID
}

// Add files id to be freed after checkpoint finalizes.
func (d *DeferredFrees) Add(checkpoint uint64, id RecordID) {
	if k := len(d.batches); k > 0 {
		last := &d.batches[k-1]
		if checkpoint < last.checkpoint {
			panic(fmt.Sprintf("heap: deferred free filed under checkpoint %d after checkpoint %d", checkpoint, last.checkpoint))
		}
		if checkpoint == last.checkpoint {
			last.ids = append(last.ids, id)
			d.n++
			return
		}
	}
	d.batches = append(d.batches, deferredBatch{checkpoint: checkpoint, ids: []RecordID{id}})
	d.n++
}

// Release removes every record filed under a checkpoint at or below
// finalized (the redo LSN of the checkpoint that just finalized), appends
// them to dst in the order they were filed, and returns dst: the caller
// frees each (Heap.Free with lsn 0).
func (d *DeferredFrees) Release(finalized uint64, dst []RecordID) []RecordID {
	i := 0
	for ; i < len(d.batches) && d.batches[i].checkpoint <= finalized; i++ {
		dst = append(dst, d.batches[i].ids...)
		d.n -= len(d.batches[i].ids)
	}
	d.batches = append(d.batches[:0], d.batches[i:]...)
	return dst
}

// Len is the number of records waiting.
func (d *DeferredFrees) Len() int { return d.n }

// Waiting is the number of records filed under checkpoint.
func (d *DeferredFrees) Waiting(checkpoint uint64) int {
	for _, b := range d.batches {
		if b.checkpoint == checkpoint {
			return len(b.ids)
		}
	}
	return 0
}
