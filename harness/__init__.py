"""harness: the conformance suite's cluster providers, pytest plugin and contract."""
