"""The test suites: unit/, integration/, conformance/ (the scenarios) and mutants/ (faulty schedulers)."""
