// Command moond is the moond server.
//
// The server is being built issue by issue; this binary prints its version
// and what io_uring this machine offers, which is what the runtime's backend
// selection will look at.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/moond-db/moond/uring"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.0.0-dev"

func main() {
	flag.Bool("version", false, "print the version and the io_uring probe, then exit")
	flag.Parse()
	fmt.Printf("moond %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	info, err := uring.Describe()
	if err != nil {
		fmt.Printf("io_uring: unavailable: %v\n", err)
	} else {
		fmt.Printf("io_uring: available\n  setup flags: %v\n  features: %v\n  opcodes: %v\n",
			info.FlagNames(), info.FeatureNames(), info.OpNames())
	}
	fmt.Fprintln(os.Stderr, "moond: the server itself is not built yet; this binary only reports its version and io_uring support")
}
