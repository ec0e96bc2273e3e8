"""VolumeBinder: the bind phase of a pod's delayed claims (volume spec V2, V4): select the node, wait for the volumes, undo.

Before a pod with unbound WaitForFirstConsumer claims is bound to node N, each
such claim is annotated ``volume.kubernetes.io/selected-node: N`` (``select_node``,
a compare-and-swap patch), the provisioner makes a volume on N, and the bind
waits, at most ``--volume-binding-timeout`` seconds, until every claim is Bound
to a volume that admits N. A wait that fails (the provisioner took the
annotation off, the claim was deleted or bound to a volume elsewhere, time ran
out) is a failed bind: the caller un-assumes the pod and rolls its claim back,
and ``unselect_node`` takes the annotation off a claim still unbound and still
naming N, so the next attempt may choose again. The decisions are
core/volume_provisioning.py's; this module reads the caches and writes.

Waiting costs no thread. ``ProvisionWaits`` keeps every waiting bind in one
list and one thread re-checks them when the PVC or PV informer reports a change
(``notify``) or a deadline comes. The 8 bind workers only write the annotation
(one request, like a bind) and hand the wait over; when it ends, the rest of the
bind goes back to a worker. So a hundred claims being provisioned hold no
worker that plain pods need, and none of them waits behind another: a pool of
threads blocked in waits would do either, bounded by its size.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import kubernetes
from kubernetes.client import ApiClient

from reference_scheduler.core import volume_binding
from reference_scheduler.core.volume_binding import VolumeLookups
from reference_scheduler.core.volume_provisioning import (
    CLAIM_GONE_MESSAGE,
    DEFAULT_VOLUME_BINDING_TIMEOUT,
    SELECTED_ELSEWHERE_MESSAGE,
    ProvisionState,
    SelectionStep,
    provisioning_check,
    selection_patch,
    selection_step,
    should_unselect,
    timed_out_message,
)
from reference_scheduler.runtime.kube_api import KubeApi

log = logging.getLogger("tkn-scheduler.volumes")

Obj = dict[str, Any]
#: Reads a node object by name (None: no such node).
NodeNamed = Callable[[str], "Mapping[str, Any] | None"]

#: Compare-and-swap attempts on one claim's annotation before giving up (each 409 reads the claim again).
CLAIM_WRITE_ATTEMPTS = 3
#: Merge patch: a null annotation value removes it (a strategic merge patch would do the same).
MERGE_PATCH = "application/merge-patch+json"


@dataclass(frozen=True)
class Selection:
    """Selection is what selecting a node on one claim did: a one-line failure, or the version that selects the node.

    ``known_version`` is the claim's resourceVersion at which it is known to
    select the node (our write's, or that of the copy that already did): the
    wait reads the cache's copy as the annotation's fate only from then on.

    Example: ``Selection(known_version="4711")`` after an annotation was written.
    """

    failure: str | None = None
    known_version: str = ""
    #: The claim as the API server answered our write (None when nothing was written), for AssumedClaims.
    written: Mapping[str, Any] | None = None


def _api_reason(err: kubernetes.client.ApiException) -> str:
    try:
        return str(json.loads(err.body or "{}").get("message") or err.reason)
    except (ValueError, AttributeError):
        return str(err.reason)


def _version(obj: Mapping[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


def read_claim(core: KubeApi, namespace: str, name: str) -> Obj | None:
    """read_claim() GETs a claim as raw JSON; None when it does not exist (other API errors raise)."""
    try:
        response = core.read_namespaced_persistent_volume_claim(name, namespace, _preload_content=False)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return None
        raise
    return _raw_json(response)


def _patch_claim(core: KubeApi, namespace: str, name: str, body: Obj) -> Obj:
    response = core.patch_namespaced_persistent_volume_claim(name, namespace, body, _preload_content=False, _content_type=MERGE_PATCH)
    return _raw_json(response)


def _raw_json(response: Any) -> Obj:
    """_raw_json() is the JSON of a raw (``_preload_content=False``) response, whose connection goes back to the pool."""
    found: Obj = json.loads(response.data)
    release = getattr(response, "release_conn", None)
    if release is not None:
        release()
    return found


def select_node(core: KubeApi, namespace: str, claim_name: str, node: str, *, cached: Mapping[str, Any] | None) -> Selection:
    """select_node() annotates a claim ``volume.kubernetes.io/selected-node: <node>`` (V2), compare-and-swap.

    ``cached`` is the informer's copy (None: read it). Nothing is written to a
    claim already Bound or already naming the node; a claim naming another node
    is refused, never overwritten. A 409 (changed since read) reads it again.
    Module-level, so a fault can be patched in for it (tests/mutants).

    Example: claim ``src`` Pending without the annotation, node n1: one PATCH,
    ``Selection(known_version=<the claim's new resourceVersion>)``.
    """
    claim: Mapping[str, Any] | None = cached
    try:
        for _ in range(CLAIM_WRITE_ATTEMPTS):
            if claim is None:
                claim = read_claim(core, namespace, claim_name)
                if claim is None:
                    return Selection(CLAIM_GONE_MESSAGE.format(claim=claim_name))
            step = selection_step(claim, node)
            if step is SelectionStep.NOTHING:
                return Selection(known_version=_version(claim))
            if step is SelectionStep.REFUSE:
                selected = volume_binding.selected_node(claim)
                return Selection(SELECTED_ELSEWHERE_MESSAGE.format(claim=claim_name, selected=selected, node=node))
            try:
                written = _patch_claim(core, namespace, claim_name, selection_patch(node, _version(claim)))
            except kubernetes.client.ApiException as err:
                if err.status != 409:
                    raise
                claim = None  # changed since it was read: read it again and decide again
                continue
            log.info("persistentvolumeclaim %s/%s: selected node %s", namespace, claim_name, node)
            return Selection(known_version=_version(written), written=written)
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            return Selection(CLAIM_GONE_MESSAGE.format(claim=claim_name))
        return Selection(f'cannot annotate persistentvolumeclaim "{claim_name}" with node {node}: {err.status} {_api_reason(err)}')
    return Selection(f'persistentvolumeclaim "{claim_name}" changed {CLAIM_WRITE_ATTEMPTS} times while node {node} was being selected')


def unselect_node(core: KubeApi, namespace: str, claim_name: str, node: str) -> Obj | None:
    """unselect_node() takes the selected-node annotation off a claim still unbound and still naming ``node`` (V4).

    It reads the claim from the API, not the cache (the cache may not show the
    annotation just written yet), and removes the annotation with
    compare-and-swap, so a claim Bound or re-selected meanwhile keeps its state.
    Failures are logged: the next attempt then sees the claim still selecting
    ``node`` and goes there. Module-level, so a fault can be patched in for it.

    Example: ``src`` Pending and annotated n1: one GET and one PATCH removing the
    annotation; ``src`` Bound meanwhile: one GET, nothing written. Returns the
    claim as the API server answered the write, or None when nothing was written.
    """
    try:
        for _ in range(CLAIM_WRITE_ATTEMPTS):
            claim = read_claim(core, namespace, claim_name)
            if not should_unselect(claim, node):
                return None
            try:
                written = _patch_claim(core, namespace, claim_name, selection_patch(None, _version(claim)))
            except kubernetes.client.ApiException as err:
                if err.status == 409:
                    continue
                raise
            log.info("persistentvolumeclaim %s/%s: took off selected node %s", namespace, claim_name, node)
            return written
    except kubernetes.client.ApiException as err:
        if err.status != 404:
            log.warning("cannot take selected node %s off persistentvolumeclaim %s/%s: %s %s", node, namespace, claim_name, err.status, _api_reason(err))
        return None
    log.warning("persistentvolumeclaim %s/%s kept changing; its selected node %s may stay", namespace, claim_name, node)
    return None


def cache_caught_up(cached_version: str, known_version: str) -> bool:
    """cache_caught_up(cached, known): the cached claim is at least as new as the version known to select the node.

    Only then does a cached copy without the annotation mean it was taken off,
    not that the watch has not shown it yet. resourceVersions are compared as
    numbers (etcd revisions, as everywhere in this scheduler: see
    cluster_view._not_newer); nothing known: caught up.

    Example: ``cache_caught_up("41", "42")`` is False; ``("42", "42")`` and ``("57", "42")`` are True.
    """
    if not known_version or cached_version == known_version:
        return True
    return cached_version.isdigit() and known_version.isdigit() and int(cached_version) > int(known_version)


@dataclass
class _Wait:
    namespace: str
    claims: tuple[str, ...]
    node: str
    timeout: float
    deadline: float
    #: Per claim, the resourceVersion known to select the node (select_node): an older cached copy tells only whether it is Bound.
    known: Mapping[str, str]
    on_done: Callable[[str | None], None] = field(default=lambda failure: None)
    #: Claims seen selecting the node (or Bound) in the cache: a stale copy cannot hide them any more.
    seen: set[str] = field(default_factory=set)


class ProvisionWaits:
    """ProvisionWaits watches every bind waiting for its claims, re-checked on PVC/PV events and at deadlines.

    ``add`` registers a wait whose ``on_done(failure)`` runs once (failure None:
    every claim is Bound to a volume admitting the node); ``run`` is its thread.
    ``wait`` is the same, blocking, for a caller without workers (tests, the
    microbenchmark). ``check`` settles what it can at once.
    """

    #: The longest the thread sleeps with nothing to re-check, so it sees a stop request (events and deadlines wake it sooner).
    IDLE_SECONDS = 1.0

    def __init__(self, *, lookups: VolumeLookups, node_named: NodeNamed, clock: Callable[[], float] = time.monotonic) -> None:
        self._lookups = lookups
        self._node_named = node_named
        self._clock = clock
        self._changed = threading.Condition()
        self._generation = 0
        self._waits: list[_Wait] = []

    def notify(self) -> None:
        """notify() is for the PVC and PV informers' handlers: something a wait reads may have changed."""
        with self._changed:
            self._generation += 1
            self._changed.notify_all()

    def pending(self) -> int:
        """pending() is how many binds wait for their volumes."""
        with self._changed:
            return len(self._waits)

    def add(
        self, namespace: str, claims: tuple[str, ...], node: str, *, timeout: float, known: Mapping[str, str], on_done: Callable[[str | None], None]
    ) -> None:
        """add() registers a bind waiting for ``claims`` on ``node``; ``on_done`` runs on the waits' thread (keep it quick)."""
        wait = _Wait(namespace, claims, node, timeout, self._clock() + timeout, dict(known), on_done)
        with self._changed:
            self._waits.append(wait)
            self._generation += 1
            self._changed.notify_all()

    def wait(self, namespace: str, claims: tuple[str, ...], node: str, *, timeout: float, known: Mapping[str, str]) -> str | None:
        """wait() blocks until the claims are Bound on the node (None) or the wait fails (the one-line reason); at most ``timeout``."""
        pending = _Wait(namespace, claims, node, timeout, self._clock() + timeout, dict(known))
        while True:
            with self._changed:
                seen = self._generation
            done, failure = self._outcome(pending)
            if done:
                return failure
            remaining = max(0.0, pending.deadline - self._clock())
            with self._changed:
                self._changed.wait_for(lambda: self._generation != seen, timeout=remaining)

    def check(self) -> float | None:
        """check() ends every wait that is settled (calling its on_done) and says how long until the nearest deadline (None: no wait left)."""
        with self._changed:
            waits = list(self._waits)
        finished = []
        for wait in waits:
            done, failure = self._outcome(wait)
            if done:
                finished.append((wait, failure))
        ended = {id(wait) for wait, _ in finished}
        with self._changed:
            self._waits = [w for w in self._waits if id(w) not in ended]
            nearest = min((w.deadline for w in self._waits), default=None)
        for wait, failure in finished:
            try:
                wait.on_done(failure)
            except Exception:  # noqa: BLE001 - one bad continuation must not strand the other waits
                log.exception("volume wait for %s on %s: its continuation failed", ", ".join(wait.claims), wait.node)
        return None if nearest is None else max(0.0, nearest - self._clock())

    def run(self, stop: threading.Event) -> None:
        """run() re-checks the waits on every change and deadline until ``stop``; waits left then are dropped (the process is ending)."""
        while not stop.is_set():
            with self._changed:
                seen = self._generation
            until_deadline = self.check()
            idle = self.IDLE_SECONDS if until_deadline is None else min(self.IDLE_SECONDS, until_deadline)
            with self._changed:
                self._changed.wait_for(lambda: self._generation != seen, timeout=idle)
        if self.pending():
            log.info("stopping with %d bind(s) still waiting for volumes; the next leader schedules their pods again", self.pending())

    def _outcome(self, wait: _Wait) -> tuple[bool, str | None]:
        """(finished, failure): every claim Bound on the node (True, None), one failed (True, why), out of time, or still waiting."""
        node = self._node_named(wait.node)
        waiting_on = None
        for name in wait.claims:
            claim = self._lookups.get_claim(wait.namespace, name)
            volume_name = ((claim or {}).get("spec") or {}).get("volumeName")
            volume = self._lookups.get_volume(str(volume_name)) if volume_name else None
            fresh = name in wait.seen or cache_caught_up(_version(claim), wait.known.get(name, ""))
            check = provisioning_check(name, claim, volume, node, wait.node, fresh=fresh)
            if check.state is ProvisionState.FAILED:
                return True, check.failure
            if claim is not None and (volume_binding.is_bound(claim) or volume_binding.selected_node(claim) == wait.node):
                wait.seen.add(name)
            if check.state is ProvisionState.WAITING and waiting_on is None:
                waiting_on = name
        if waiting_on is None:
            return True, None
        if self._clock() >= wait.deadline:
            return True, timed_out_message(waiting_on, wait.node, wait.timeout)
        return False, None


class VolumeBinder:
    """VolumeBinder is the cycle's handle on volumes: the caches it decides from, and the bind phase's writes and waits."""

    def __init__(
        self,
        api: ApiClient | None,
        *,
        lookups: VolumeLookups,
        node_named: NodeNamed,
        timeout: float = DEFAULT_VOLUME_BINDING_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        assume: Callable[[Mapping[str, Any] | None], None] = lambda written: None,
    ) -> None:
        self._core = KubeApi(api)
        self.lookups = lookups
        #: Our writes count in the caches at once (AssumedClaims.assume), not only once the watch shows them.
        self._assume = assume
        self.timeout = timeout
        self._node_named = node_named
        self.waits = ProvisionWaits(lookups=lookups, node_named=node_named, clock=clock)

    def prepare(self, pod: Mapping[str, Any], node: str) -> tuple[tuple[str, ...], str | None]:
        """prepare() checks the pod's own claims again on its node, as the caches hold them now, and names those to provision.

        Returns (claims to provision, None), or ((), the one-line failure) when a
        claim changed since the attempt so that the node no longer takes it (it
        was deleted, selected for another node, bound elsewhere). A pod with no
        claim costs one scan of its volumes.
        """
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        own = volume_binding.pod_claim_names(pod)
        if not own:
            return (), None
        constraints = volume_binding.volume_constraints(namespace, own, self.lookups)
        node_object = self._node_named(node)
        failures = constraints.unresolvable if node_object is None else volume_binding.volume_failures(constraints, node_object)
        if failures:
            return (), "; ".join(reason.message() for reason in failures)
        return volume_binding.claims_to_provision(namespace, own, self.lookups), None

    def select(self, namespace: str, claims: tuple[str, ...], node: str) -> tuple[dict[str, str], str | None]:
        """select() makes each claim select the node (``select_node``); returns the versions known to select it, and the first failure."""
        known: dict[str, str] = {}
        for name in claims:
            selection = select_node(self._core, namespace, name, node, cached=self.lookups.get_claim(namespace, name))
            self._assume(selection.written)
            if selection.failure is not None:
                return known, selection.failure
            if selection.known_version:
                known[name] = selection.known_version
        return known, None

    def unselect(self, namespace: str, claims: tuple[str, ...], node: str) -> None:
        """unselect() takes the node's selection off each claim still unbound and naming it (``unselect_node``)."""
        for name in claims:
            self._assume(unselect_node(self._core, namespace, name, node))

    def wait(self, namespace: str, claims: tuple[str, ...], node: str, known: Mapping[str, str]) -> str | None:
        """wait() blocks until the claims are Bound on the node, at most ``timeout``: None, or why not."""
        return self.waits.wait(namespace, claims, node, timeout=self.timeout, known=known)

    def wait_later(self, namespace: str, claims: tuple[str, ...], node: str, known: Mapping[str, str], on_done: Callable[[str | None], None]) -> None:
        """wait_later() hands the wait to ProvisionWaits' thread; ``on_done(None or why not)`` runs there when it ends."""
        self.waits.add(namespace, claims, node, timeout=self.timeout, known=known, on_done=on_done)
