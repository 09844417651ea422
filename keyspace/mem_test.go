package keyspace

import "testing"

// TestAllocSizeIsTheSmallestClassThatFits checks allocSize, table and
// search alike, against a walk of the size classes.
func TestAllocSizeIsTheSmallestClassThatFits(t *testing.T) {
	for n := int64(-1); n <= sizeClasses[len(sizeClasses)-1]+10000; n++ {
		want := max(n, 0)
		switch {
		case n > sizeClasses[len(sizeClasses)-1]:
			want = (n + 8191) / 8192 * 8192
		case n >= 16:
			for _, c := range sizeClasses {
				if c >= n {
					want = c
					break
				}
			}
		}
		if got := allocSize(n); got != want {
			t.Fatalf("allocSize(%d) = %d, want %d", n, got, want)
		}
	}
}
