"""etcd_restart: etcd is restarted under the API server while A holds its peak; the claim holds and B is judged after recovery.

Local cluster only: kind's etcd is a static pod the suite does not restart, and
an existing cluster's is not the suite's to touch (the runner skips it there,
saying so). What an etcd outage does, measured 2026-12-01 on the local cluster
(a probe client, etcd held down about 28 s): every request the watch cache
cannot answer hangs without an answer (/readyz, a GET, a consistent LIST of
ConfigMaps or of ReservationRecords, a PATCH): no HTTP status, not even a 5xx,
until etcd is back; a LIST with resourceVersion=0 is served from the cache at
once; a PATCH without a client timeout succeeds once etcd is back (18 s), one
whose client gave up after 4 s never lands; open watches neither end nor err,
and deliver the events written after the restart; past 10 s
kube-controller-manager and kube-scheduler lose their leases. So a scheduler
that only watches sees silence and latency, and one that reads with a client
timeout sees its own timeouts, never an error from the server.

The fault it exists to catch: a read that timed out taken for "not there"
(mutant `timed_out_read_is_deleted`: its releaser reads each PipelineRun
afresh, with a 1 s client timeout, at its 5 s resync, and takes a timeout for
the run deleted; in the outage it releases A with PipelineRunDeleted, and the
release lands once etcd is back). Measured 2026-12-01, 10 runs each: the
mutant killed 10/10 (the contract monitor's release-reason-untrue, 10.9-12.0 s
into the run), the reference passed 10/10 (19-21 s a run); the cluster served
again 11.5-12.8 s after etcd's stop, with no lease lost. A variant of
`forgets_records_on_broken_watch` that forgot the records whenever a watch
ended, cleanly or not, passed it (1 run): the watches do not end. etcd is
stopped (SIGTERM) and started again on its data directory while A reserves
3800m on its node and runs only its 200m task; B arrives once the cluster
serves again.
"""

from __future__ import annotations

from harness.suite.checks import peak_must_survive_a_restart
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="etcd_restart",
    description="etcd is restarted while A reserves 3800m and runs 200m: A stays Reserved on its node with the same claimGeneration, B (2000m) created after the restart goes to the other node, A's big task lands on A's node and both runs are Released at the end",
    features=(Feature.RESILIENCE,),
    fixtures=("etcd_restart-a", "etcd_restart-filler", "etcd_restart-b"),
    volumes=("a-source", "b-source"),
    restarts=("etcd",),
)


def test_etcd_restart(run: ScenarioRun) -> None:
    peak_must_survive_a_restart(run, "etcd_restart", component="etcd", what="etcd restarted")
