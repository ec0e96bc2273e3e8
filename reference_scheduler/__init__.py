"""reference_scheduler: a reservation scheduler for Tekton PipelineRuns.

`core` holds the pure decisions (groups, peaks, accounting, claims, release);
`runtime` holds the informers, API writes and the scheduling queue that call them.
"""
