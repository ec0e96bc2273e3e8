"""Cluster providers: `local` (etcd + kube-apiserver + KWOK + Tekton, built from pinned Go modules), `kind`, `existing`."""
