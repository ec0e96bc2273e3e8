"""Node pools that go once their scenario's provisioned volumes are gone, without holding up the next scenario.

A provisioned volume is deleted by a helper pod on the volume's node
(harness.cluster.volumes), so a scenario's pool may go only after the
provisioner has deleted the volumes of the scenario's claims: a second or two
after the claims go on the local cluster, four to five on kind, where the
helper is a real container. The wait moves out of the scenario's teardown
either way (`Retirement`):

- where a pool is nodes of its own (the local cluster's KWOK nodes), nothing
  else needs those nodes: the pool is removed at a later teardown (or at the end
  of the session) that finds its volumes gone;
- where pools are shared nodes (kind's workers, an existing cluster's slots),
  the next scenario may need them: a thread of the pool's own waits for the
  volumes and gives the nodes back, while the worker starts its next scenario
  on other free slots (or waits for these, `pool_slots_free`).

A pool whose volumes outlive `volume_bound` goes anyway, and the next teardown
(or the session's end) fails, naming the volumes left behind.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.cluster.volumes import provisioned_volumes_of, wait_provisioned_volumes_gone
from harness.errors import HarnessError
from harness.kube import Kube
from harness.timeouts import TimeoutConfig


class Retirement(enum.Enum):
    """Retirement is when a retired pool goes (RetiredPools)."""

    #: At a later teardown that finds its volumes gone, or at the session's end: pools of nodes of their own.
    LATER = "later"
    #: Beside the next scenario, from a thread of its own: pools of shared slot nodes.
    BESIDE = "beside"


@dataclass(frozen=True)
class _Retired:
    pool: Any
    namespaces: tuple[str, ...]
    deadline: float


class RetiredPools:
    """RetiredPools removes scenarios' pools once their provisioned volumes are gone, later or beside the next scenario.

    Example: on the local cluster `retire(pool, ('conf-a-1b2c3d',))` returns at
    once; the pool goes at the first `reap()` (every later retire) that finds no
    provisioned volume of `conf-a-1b2c3d`, and `drain()` waits for the rest. On
    kind `retire()` also returns at once, and a thread removes the pool as soon
    as the volumes are gone; `drain()` waits for the threads.
    """

    def __init__(
        self, cluster: Any, kube: Kube, timeouts: TimeoutConfig, *, when: Retirement, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._cluster = cluster
        self._kube = kube
        self._timeouts = timeouts
        self._when = when
        self._clock = clock
        self._retired: list[_Retired] = []
        self._removals: list[threading.Thread] = []
        self._failures: list[Exception] = []
        self._failures_lock = threading.Lock()

    def retire(self, pool: Any, namespaces: tuple[str, ...]) -> None:
        """retire() hands over a scenario's pool once its pods and claims are deleted; an earlier removal's failure is raised here."""
        if self._when is Retirement.BESIDE:
            removal = threading.Thread(
                target=self._remove_noting_failure, args=(pool, namespaces), name=f"retire-{getattr(pool, 'name', pool)}", daemon=True
            )
            self._removals = [thread for thread in self._removals if thread.is_alive()] + [removal]
            removal.start()
            self._raise_failures()
            return
        self._retired.append(_Retired(pool, namespaces, self._clock() + self._timeouts.volume_bound))
        self.reap()

    def reap(self) -> None:
        """reap() removes each retired pool whose volumes are gone; one whose volumes outlived `volume_bound` is an error."""
        volumes = self._kube.core.list_persistent_volume().items if self._retired else []
        kept: list[_Retired] = []
        late: list[str] = []
        for retired in self._retired:
            left = [name for namespace in retired.namespaces for name in provisioned_volumes_of(volumes, namespace)]
            if not left:
                self._cluster.remove_node_pool(self._kube, retired.pool)
            elif self._clock() > retired.deadline:
                # The pool goes anyway: its volumes are lost to a provisioner that does not delete them, and say so.
                self._cluster.remove_node_pool(self._kube, retired.pool)
                late.append(f"{', '.join(retired.namespaces)}: {', '.join(left[:5])}")
            else:
                kept.append(retired)
        self._retired = kept
        if late:
            raise HarnessError(
                f"provisioned volumes outlived their claims by {self._timeouts.volume_bound:g}s (volume_bound) and are left behind: "
                f"{'; '.join(late)}; is the local-path provisioner running (rescon cluster status)?"
            )

    def drain(self) -> None:
        """drain() waits, bounded, until every retired pool can go, and removes it: the end of a session."""
        retired, self._retired = self._retired, []
        for each in retired:  # every pool gets its chance; the first failure is reported
            self._remove_noting_failure(each.pool, each.namespaces)
        # Each removal is bounded by its own waits (volume_bound, then the provider's).
        for removal in self._removals:
            removal.join()
        self._removals = []
        self._raise_failures()

    def _remove_noting_failure(self, pool: Any, namespaces: tuple[str, ...]) -> None:
        try:
            self._remove_when_gone(pool, namespaces)
        except Exception as err:  # raised in the worker's own thread at its next retire() or drain()
            with self._failures_lock:
                self._failures.append(err)

    def _raise_failures(self) -> None:
        with self._failures_lock:
            failures, self._failures = self._failures, []
        if failures:
            raise failures[0]

    def _remove_when_gone(self, pool: Any, namespaces: tuple[str, ...]) -> None:
        try:
            for namespace in namespaces:
                wait_provisioned_volumes_gone(self._kube, namespace, timeouts=self._timeouts)
        finally:
            # Gone or not, the pool goes (as in reap()): its nodes serve the next scenarios, and the wait's error names the volumes.
            self._cluster.remove_node_pool(self._kube, pool)
