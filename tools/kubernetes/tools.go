//go:build tools

// Package tools pins the Kubernetes programs the local cluster runs. The build
// tag keeps this file out of every build; it exists so that `go mod tidy`
// records the full dependency set of each program in go.sum.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
