// Command etcd runs the etcd server. etcd's own main module carries replace
// directives, which `go build` ignores in a dependency, so the local cluster
// builds this thin entry point against the published server module instead.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
