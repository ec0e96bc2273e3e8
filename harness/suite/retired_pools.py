"""Node pools that go once their scenario's provisioned volumes are gone, without holding up the next scenario.

A provisioned volume is deleted by a helper pod on the volume's node
(harness.cluster.volumes), so a scenario's pool may go only after the
provisioner has deleted the volumes of the scenario's claims: a second or two
after the claims go. Where a pool is nodes of its own (the local cluster's KWOK
nodes), nothing else needs those nodes, so the wait moves out of the
scenario's teardown: the pool is *retired*, and removed at a later teardown (or
at the end of the session) once its volumes are gone. Where pools are shared
nodes (kind's workers, an existing cluster's slots) the next scenario needs
them back, and the teardown waits as before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.cluster.volumes import provisioned_volumes_of, wait_provisioned_volumes_gone
from harness.errors import HarnessError
from harness.kube import Kube
from harness.timeouts import TimeoutConfig


@dataclass(frozen=True)
class _Retired:
    pool: Any
    namespaces: tuple[str, ...]
    deadline: float


class RetiredPools:
    """RetiredPools removes scenarios' pools once their provisioned volumes are gone: at once (defer=False) or later.

    Example: on the local cluster `retire(pool, ('conf-a-1b2c3d',))` returns at
    once; the pool goes at the first `reap()` (every later retire) that finds no
    provisioned volume of `conf-a-1b2c3d`, and `drain()` waits for the rest.
    """

    def __init__(
        self, cluster: Any, kube: Kube, timeouts: TimeoutConfig, *, defer: bool, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._cluster = cluster
        self._kube = kube
        self._timeouts = timeouts
        self._defer = defer
        self._clock = clock
        self._retired: list[_Retired] = []

    def retire(self, pool: Any, namespaces: tuple[str, ...]) -> None:
        """retire() hands over a scenario's pool once its pods and claims are deleted."""
        if not self._defer:
            self._remove_when_gone(pool, namespaces)
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
        failures: list[Exception] = []
        for each in retired:
            try:
                self._remove_when_gone(each.pool, each.namespaces)
            except Exception as err:  # every pool gets its chance; the first failure is reported
                failures.append(err)
        if failures:
            raise failures[0]

    def _remove_when_gone(self, pool: Any, namespaces: tuple[str, ...]) -> None:
        for namespace in namespaces:
            wait_provisioned_volumes_gone(self._kube, namespace, timeouts=self._timeouts)
        self._cluster.remove_node_pool(self._kube, pool)
