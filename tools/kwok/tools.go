//go:build tools

// Package tools pins kwok (the node and pod simulator) and kwokctl (which runs
// the local cluster's processes). See ../kubernetes/tools.go for why.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
	_ "sigs.k8s.io/kwok/cmd/kwokctl"
)
