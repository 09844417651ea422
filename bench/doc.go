// Package bench holds moond's measuring tools: a `go test -bench` suite for
// the hot path without the network (hotpath_test.go) and the script that
// runs redis-benchmark against moond and redis-server side by side
// (redis_compare.sh). See README.md in this directory.
package bench
