//go:build tools

// Package tools pins the local-path provisioner, the default storage of kind
// clusters, which the local cluster runs as kind does. See ../kubernetes/tools.go
// for why a file with a build tag.
package tools

import (
	_ "github.com/rancher/local-path-provisioner"
)
