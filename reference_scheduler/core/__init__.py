"""Pure scheduling decisions: no I/O, no Kubernetes client calls.

Every function here takes plain data (dataclasses or the raw JSON dicts the API
returns) and returns plain data, so it can be unit-tested without a cluster.
"""
