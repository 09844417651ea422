package keyspace

import "sort"

// sizeClasses are the Go allocator's small object size classes, in bytes.
// Accounting rounds every allocation up to one of them, or to whole 8 KiB
// pages beyond the largest, as the allocator does.
var sizeClasses = [...]int64{
	8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
	240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896,
	1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456,
	4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880,
	12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264,
	28672, 32768,
}

// allocSize is the memory the allocator hands out for a request of n bytes.
// Below 16 bytes it is n: keys and values hold no pointers, and the
// allocator packs such tiny objects together in 16-byte blocks.
func allocSize(n int64) int64 {
	if n < 16 {
		return max(n, 0)
	}
	if n <= smallClassMax {
		return smallClass[(n+7)>>3]
	}
	if n > sizeClasses[len(sizeClasses)-1] {
		const page = 8192
		return (n + page - 1) / page * page
	}
	i := sort.Search(len(sizeClasses), func(i int) bool { return sizeClasses[i] >= n })
	return sizeClasses[i]
}

// smallClassMax is the largest request smallClass answers: every size
// class up to it is a multiple of 8, so the class of n is the class of n
// rounded up to 8 (the allocator's own size_to_class8 table).
const smallClassMax = 1024

// smallClass[(n+7)/8] is allocSize(n) for 16 <= n <= smallClassMax: a
// load or a write calls allocSize for every key and value, and the binary
// search was a few percent of a million-key boot.
var smallClass = func() (t [smallClassMax/8 + 1]int64) {
	c := 0
	for i := range t {
		for sizeClasses[c] < int64(i*8) {
			c++
		}
		t[i] = sizeClasses[c]
	}
	return t
}()
