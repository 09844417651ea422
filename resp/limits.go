package resp

import "math"

// Redis's defaults for the protocol limits.
const (
	// defaultMaxBulkLen is proto-max-bulk-len.
	defaultMaxBulkLen = 512 << 20
	// defaultMaxMultibulkLen is the largest argument count Redis 7 accepts
	// in one multibulk command: processMultibulkBuffer refuses a count above
	// INT_MAX. (Redis before 6.0 refused counts above 1024*1024.)
	defaultMaxMultibulkLen = math.MaxInt32
	// defaultMaxInlineLen is PROTO_INLINE_MAX_SIZE.
	defaultMaxInlineLen = 64 << 10
	// defaultQueryBufferLimit is client-query-buffer-limit.
	defaultQueryBufferLimit = 1 << 30
)

// Limits that Redis applies to clients that have not authenticated yet, on a
// server that requires a password. They are fixed in Redis, not configurable.
const (
	unauthMaxMultibulkLen = 10
	unauthMaxBulkLen      = 16384
)

// Limits bounds what a client may send. The field names follow the
// redis.conf directives they mirror; a zero or negative field means Redis's
// default for it, so the zero Limits is Redis's configuration out of the box.
type Limits struct {
	// MaxBulkLen is the longest argument of a multibulk command, in bytes
	// (proto-max-bulk-len, default 512 MiB). A longer one is refused with
	// "invalid bulk length".
	MaxBulkLen int64

	// MaxMultibulkLen is the most arguments one multibulk command may
	// announce. Redis 7 has no directive for it and accepts up to INT_MAX
	// (2147483647), the default here; a larger count is refused with
	// "invalid multibulk length". Memory is never reserved for announced
	// arguments, only for those that arrive.
	MaxMultibulkLen int64

	// MaxInlineLen is the longest inline command, and the longest count
	// line (*N or $N) of a multibulk command, before its line end arrives
	// (PROTO_INLINE_MAX_SIZE, 64 KiB).
	MaxInlineLen int

	// QueryBufferLimit is the most bytes of input a client may have
	// buffered (client-query-buffer-limit, default 1 GiB). The parser never
	// holds input itself; the connection checks its buffer with
	// [Parser.ExceedsQueryBuffer].
	QueryBufferLimit int64
}

// DefaultLimits returns Redis's default limits.
func DefaultLimits() Limits {
	return Limits{
		MaxBulkLen:       defaultMaxBulkLen,
		MaxMultibulkLen:  defaultMaxMultibulkLen,
		MaxInlineLen:     defaultMaxInlineLen,
		QueryBufferLimit: defaultQueryBufferLimit,
	}
}

// withDefaults returns l with every unset field replaced by its default.
func (l Limits) withDefaults() Limits {
	if l.MaxBulkLen <= 0 {
		l.MaxBulkLen = defaultMaxBulkLen
	}
	if l.MaxMultibulkLen <= 0 {
		l.MaxMultibulkLen = defaultMaxMultibulkLen
	}
	if l.MaxInlineLen <= 0 {
		l.MaxInlineLen = defaultMaxInlineLen
	}
	if l.QueryBufferLimit <= 0 {
		l.QueryBufferLimit = defaultQueryBufferLimit
	}
	return l
}
