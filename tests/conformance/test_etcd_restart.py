"""etcd_restart: etcd is restarted under the API server while A holds its peak; the claim holds and B is judged after recovery.

Local cluster only: kind's etcd is a static pod the suite does not restart, and
an existing cluster's is not the suite's to touch (the runner skips it there,
saying so). The fault it is meant to catch is the one api_server_restart
catches, from the storage side: a scheduler whose view of the reservations
does not survive the outage. No mutant is known to be killed by it yet: a
variant of `forgets_records_on_broken_watch` that forgot the records whenever
a watch ended, cleanly or not, passed it (1 run), so the scheduler's watches
did not end; etcd's client in the API server seems to resume its own watch
across a restart this short. Measured 2026-12-01 (a probe client, etcd held down about 28 s): every
request the watch cache cannot answer hangs without an answer (/readyz, a GET, a consistent LIST of
ConfigMaps or of ReservationRecords, a PATCH): no HTTP status, not even a 5xx, until etcd is back; a
LIST with resourceVersion=0 is served from the cache at once; a PATCH without a client timeout
succeeds once etcd is back (18 s), one whose client gave up after 4 s never lands; open watches
neither end nor err, and deliver the events written after the restart. So a scheduler that does
not write during the outage sees only silence and latency. etcd is stopped (SIGTERM) and started again on its data directory
while A reserves 3800m on its node and runs only its 200m task; B arrives
once the cluster serves again.
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
