"""api_server_restart: every watch breaks while A holds its peak; the claim holds and B is judged after recovery.

The fault it exists to catch: a scheduler whose view of the reservations does
not survive a broken watch (mutant `forgets_records_on_broken_watch`: its
record cache is emptied when the watch fails and refilled only by the events
that follow, so a claim nobody writes again is forgotten). The API server is
stopped (SIGTERM, as a rolling restart does) and started again while A
reserves 3800m on its node and runs only its 200m task; B arrives once the
cluster serves again.
"""

from __future__ import annotations

from harness.suite.checks import peak_must_survive_a_restart
from harness.suite.features import Feature
from harness.suite.run import ScenarioRun
from harness.suite.scenario import Scenario

SCENARIO = Scenario(
    name="api_server_restart",
    description="kube-apiserver is restarted while A reserves 3800m and runs 200m: A stays Reserved on its node with the same claimGeneration, B (2000m) created after the restart goes to the other node, A's big task lands on A's node and both runs are Released at the end",
    features=(Feature.RESILIENCE,),
    fixtures=("api_server_restart-a", "api_server_restart-filler", "api_server_restart-b"),
    volumes=("a-source", "b-source"),
    restarts=("kube-apiserver",),
)


def test_api_server_restart(run: ScenarioRun) -> None:
    peak_must_survive_a_restart(run, "api_server_restart", component="kube-apiserver", what="the API server restarted")
