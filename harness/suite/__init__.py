"""The conformance suite's machinery: features, scenarios, the scheduler under test, and the checks."""
