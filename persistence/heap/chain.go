package heap

import "fmt"

// chainStep returns the header and data of overflow page no (data may be
// nil when only the header is known), or an error.
type chainStep func(no uint32) (OverflowHeader, []byte, error)

// walkChain follows the overflow chain of the record at rid, whose head says
// the chain starts at first and holds n bytes, and calls visit with each
// page and its data, in order, until visit says stop. It verifies every
// page on the way: it is an overflow page of this record (owner and
// sequence number), every page but the last is full, and the chain ends
// exactly where the record says. A violation is a *PageError wrapping
// ErrCorrupt that names the page.
func walkChain(rid RecordID, first uint32, n uint64, step chainStep, visit func(no uint32, data []byte) (bool, error)) error {
	remaining := n
	next := first
	for seq := uint64(0); remaining > 0; seq++ {
		if next == NoPage {
			return pageErr(rid.File, rid.Page, ErrCorrupt, "overflow chain of slot %d ends %d bytes early", rid.Slot, remaining)
		}
		h, data, err := step(next)
		if err != nil {
			return err
		}
		switch {
		case h.OwnerPage != rid.Page || h.OwnerSlot != rid.Slot || h.Seq != uint16(seq):
			return pageErr(rid.File, next, ErrCorrupt, "overflow page says it is #%d of the chain of %d/%d, expected #%d of %d/%d",
				h.Seq, h.OwnerPage, h.OwnerSlot, uint16(seq), rid.Page, rid.Slot)
		case uint64(h.Len) > remaining:
			return pageErr(rid.File, next, ErrCorrupt, "overflow page holds %d bytes, %d remain in the chain", h.Len, remaining)
		case uint64(h.Len) < remaining && h.Len != OverflowCapacity:
			return pageErr(rid.File, next, ErrCorrupt, "overflow page #%d holds %d bytes but is not the last", seq, h.Len)
		}
		remaining -= uint64(h.Len)
		cur := next
		next = h.Next
		more, err := visit(cur, data)
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
	if next != NoPage {
		return pageErr(rid.File, rid.Page, ErrCorrupt, "overflow chain of slot %d continues past its %d bytes", rid.Slot, n)
	}
	return nil
}

// pageStep is a chainStep over whole pages that get returns.
func pageStep(file uint32, get func(no uint32) (*Page, error)) chainStep {
	return func(no uint32) (OverflowHeader, []byte, error) {
		p, err := get(no)
		if err != nil {
			return OverflowHeader{}, nil, err
		}
		if p.Type() != PageOverflow {
			return OverflowHeader{}, nil, pageErr(file, no, ErrCorrupt, "overflow chain reaches a %v page", p.Type())
		}
		h, data := p.Overflow()
		return h, data, nil
	}
}

// appendSpan appends bytes [from, to) of the key‖value of the record v at
// rid to dst: the inline bytes first, then the chain, read through step as
// far as needed.
func appendSpan(dst []byte, rid RecordID, v RecordView, step chainStep, from, to uint64) ([]byte, error) {
	if from > to || to > v.total() {
		panic(fmt.Sprintf("heap: span [%d,%d) of a %d-byte record", from, to, v.total()))
	}
	in := uint64(len(v.Inline))
	if from < in {
		dst = append(dst, v.Inline[from:min(to, in)]...)
	}
	if to <= in {
		return dst, nil
	}
	pos := in
	err := walkChain(rid, v.Overflow, v.ChainBytes(), step, func(_ uint32, data []byte) (bool, error) {
		end := pos + uint64(len(data))
		if from < end && to > pos {
			dst = append(dst, data[max(from, pos)-pos:min(to, end)-pos]...)
		}
		pos = end
		return pos < to, nil
	})
	return dst, err
}

// span returns the parts of key and value that make up bytes [from, to) of
// key‖value.
func span(key, value []byte, from, to int) (a, b []byte) {
	k := len(key)
	if from < k {
		a = key[from:min(to, k)]
	}
	if to > k {
		b = value[max(from, k)-k : to-k]
	}
	return a, b
}
