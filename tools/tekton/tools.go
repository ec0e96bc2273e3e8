//go:build tools

// Package tools pins the Tekton Pipelines controller, which the local cluster
// runs as a supervised process outside the cluster. See ../kubernetes/tools.go.
package tools

import (
	_ "github.com/tektoncd/pipeline/cmd/controller"
	_ "github.com/tektoncd/pipeline/cmd/resolvers"
)
