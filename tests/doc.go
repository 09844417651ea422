// Package tests holds moond's end-to-end tests: they build the real moond
// binary, start it on a free port on each I/O backend and shard count, and
// drive it with real clients (go-redis, redis-cli, redis-benchmark) and raw
// sockets for malformed input.
package tests
