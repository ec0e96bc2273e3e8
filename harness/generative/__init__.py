"""generative: PipelineRuns drawn from a grammar of Tekton features, and the suite's own expectations for them.

`grammar` draws the runs (seeded, so a seed replays them), `pod_requests` is
the contract's per-container arithmetic (docs/contract.md section 6.1) and
`peaks` the concurrency and peak of section 6. None of it reads the reference
scheduler: the suite judges it.
"""
