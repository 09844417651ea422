package checkpoint

// Recyclable returns, of the WAL segments whose first LSNs are firsts
// (ascending), those whose every record is below redo: segment i qualifies
// when segment i+1 starts at or below redo. The last segment never does.
func Recyclable(firsts []uint64, redo uint64) []uint64 {
	var out []uint64
	for i := 0; i+1 < len(firsts); i++ {
		if firsts[i+1] > redo {
			break
		}
		out = append(out, firsts[i])
	}
	return out
}
