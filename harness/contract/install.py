"""install: put the contract's CRD on a cluster and wait until the API server serves it.

A ReservationRecord client started right after the create can still get 404
for a moment; the reference refuses to start on a 404 (no CRD, no records),
so everyone who starts a scheduler after installing the CRD waits here first.
"""

from __future__ import annotations

import kubernetes

from harness.contract.record import crd_manifest
from harness.kube import Kube, present
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, wait_for


def install_crd(kube: Kube, *, timeouts: TimeoutConfig) -> None:
    """install_crd() applies the ReservationRecord CRD and waits (crd_established) until it is Established."""
    crd = crd_manifest()
    kube.apply(crd)
    ext = kubernetes.client.ApiextensionsV1Api(kube.api)

    def established() -> None:
        obj = ext.read_custom_resource_definition(crd["metadata"]["name"])
        if {c.type: c.status for c in (present(obj.status).conditions or [])}.get("Established") != "True":
            raise NotYet("the ReservationRecord CRD is not Established yet")

    wait_for(established, what="the ReservationRecord CRD", timeout="crd_established", timeouts=timeouts)
