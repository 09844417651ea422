//go:build !unix

package shard

import "os"

// killSelf ends the process at once, the nearest to kill -9 here.
func killSelf() { os.Exit(137) }
