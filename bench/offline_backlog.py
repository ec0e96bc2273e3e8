"""Offline backlog: the reference scheduler's own CPU per bound pod, with no cluster.

    python -m bench.offline_backlog --nodes 1000                 # one run: CPU per bound pod, where it went, the digest
    python -m bench.offline_backlog --nodes 1000 --profile p.prof  # the same under cProfile (every thread, CPU time)
    python -m bench.offline_backlog --compare BEFORE_TREE AFTER_TREE --nodes 100,1000,5000 --turns 3

It runs `make bench`'s backlog (bench/run.py run_backlog: the Tekton mix's pending PipelineRuns
and their first pods, created before the scheduler starts; 300, 600 and 300 pods at 100, 1000 and
5000 KWOK nodes, bench/scales.py) through the reference's real runtime: `Scheduler` with its
informers, ClusterView, queue, hints, cycle, record writer, event recorder and releaser, and real
`kubernetes.client.ApiClient`s whose sockets are replaced by an in-process API server
(bench/fake_api.py). So what the reference pays for is all here: the LIST and every watch event
decoded from JSON lines by the client's watch, its caches kept, each attempt decided, each write
built and encoded by the generated client, each answer decoded. The API server's own work is timed
apart and left out.

The run is serialised and deterministic: the writes the scheduler hands to its worker threads
(records' lanes, binds, labels, events) run here one at a time in the order submitted, each watch
event is delivered after the informer handled the one before, and the scheduler's clocks are a
simulated one that advances as QPS 50/burst 100 token buckets make the client wait, which paces
KWOK's node heartbeats (each node every 20-45 s) and the releaser's 5 s resync. By default the
writes wait until the queue is empty, as on the cluster at QPS 50, where the scheduling thread
decides the whole backlog long before the token bucket lets the writes through (`--lag N` lets
at most N writes wait instead). The digest covers every bind, record write and event message.

Not counted: the socket, TLS and HTTP parsing, and the GIL's hand-offs between threads; the
interpreter's start and the imports are measured apart (`import_cpu_s`), as they are a fixed
cost that the cluster's figure (the process's whole CPU) includes.
"""

from __future__ import annotations

import resource
import time

_IMPORT_STARTED = time.process_time()
import reference_scheduler.main  # noqa: E402,F401 - what the scheduler's process imports, timed

IMPORT_CPU_SECONDS = time.process_time() - _IMPORT_STARTED

import argparse  # noqa: E402
import cProfile  # noqa: E402
import hashlib  # noqa: E402
import heapq  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from collections import Counter, deque  # noqa: E402
from contextlib import ExitStack  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Hashable, Iterator  # noqa: E402
from unittest import mock  # noqa: E402

import kubernetes  # noqa: E402
import urllib3  # noqa: E402

from bench import offline_objects as objects  # noqa: E402
from bench.fake_api import FakeApiServer, FakePoolManager  # noqa: E402
from bench.schedulers import bench_scheduler_name  # noqa: E402
from bench.workload import MIXES, direct_workload  # noqa: E402
from harness.cluster.node_pools import POOL_LABEL  # noqa: E402
from reference_scheduler.core.scoring import Strategy  # noqa: E402
from reference_scheduler.runtime import cluster_view, events, scheduler as scheduler_module, siblings  # noqa: E402
from reference_scheduler.runtime.informer import Informer  # noqa: E402
from reference_scheduler.runtime.observability import ApiClientName, Observability, configure_logging  # noqa: E402
from reference_scheduler.runtime.ratelimit import TokenBucket, limit_requests  # noqa: E402
from reference_scheduler.runtime.scheduler import Scheduler  # noqa: E402

Obj = dict[str, Any]

#: `make bench`'s full-scale backlogs (bench/scales.py): pods per node count.
BACKLOG_PODS = {100: 300, 1000: 600, 5000: 300}
#: The throughput pools' nodes (bench/scales.py Scale): 4 CPU, 16Gi, 110 pods.
NODE_CPU, NODE_MEMORY, NODE_PODS = "4", "16Gi", 110
#: Bound claims the backlog's runs share round-robin (bench/run.py throughput_part: make_pvcs(10)).
CLAIMS = 10
#: KWOK's rescon-node-heartbeat stage: every 20 s plus up to 25 s of jitter (harness/cluster/simulation.py).
HEARTBEAT_SECONDS, HEARTBEAT_JITTER_SECONDS = 20.0, 25.0
#: main.py's gauges thread refreshes every GAUGE_SECONDS; the releaser resyncs every 5 s (config default).
GAUGE_SECONDS, RESYNC_SECONDS = 2.0, 5.0
TEKTON_NAMESPACE = "tekton-pipelines"


@dataclass(frozen=True)
class Shape:
    """Shape is one offline run: the pool, the backlog, the client's token bucket and how far the writes may lag."""

    nodes: int
    pods: int
    qps: float = 50.0
    burst: int = 100
    lag: int | None = None  # writes waiting before one runs; None: they run once the queue is empty
    heartbeats: bool = True
    seed: int = 1


class SimClock:
    """SimClock is the run's time: it moves only when a token bucket makes the client wait (or the driver idles)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)


class SerialWork:
    """SerialWork stands in for the scheduler's worker threads (Background, Lanes): one FIFO the driver runs, task by task.

    Every key's tasks still run in the order submitted (what Lanes promises), and so does
    every pool's; the only interleaving left out is the threads'.
    """

    def __init__(self) -> None:
        self.tasks: deque[tuple[str, Callable[[], None]]] = deque()

    def background(self, name: str, *, threads: int, max_pending: int = 0) -> "_Pool":
        return _Pool(self, name)

    def lanes(self, name: str, *, threads: int) -> "_Lanes":
        return _Lanes(self, name)

    def run_one(self) -> str:
        name, task = self.tasks.popleft()
        try:
            task()
        except Exception:  # noqa: BLE001 - as Background does: logged, the others go on
            logging.getLogger("bench.offline").exception("a deferred %s task failed", name)
        return name


class _Pool:
    def __init__(self, work: SerialWork, name: str) -> None:
        self._work, self._name = work, name

    def submit(self, task: Callable[[], None]) -> bool:
        self._work.tasks.append((self._name, task))
        return True

    def wait_idle(self, timeout: float) -> bool:
        return not self._work.tasks


class _Lanes(_Pool):
    def submit(self, key: Hashable, task: Callable[[], None]) -> None:  # type: ignore[override]
        self._work.tasks.append((self._name, task))


@dataclass
class World:
    """World is what the API server holds before the scheduler starts, and the names the run needs."""

    namespace: str
    pool: str
    pods: list[tuple[str, str]]
    node_names: list[str]


def build_world(server: FakeApiServer, shape: Shape) -> World:
    """build_world() fills the server as `make bench` leaves the cluster when the backlog's scheduler starts."""
    namespace, pool = f"bench-n{shape.nodes}-offline", f"bench-n{shape.nodes}-pool"
    for name in ("default", "kube-system", TEKTON_NAMESPACE, namespace):
        server.put("namespaces", objects.stored(objects.namespace_object(name), namespace=None, uid=server.next_uid(), version=server.next_version()))
    flags = {"coschedule": "disabled", "enable-api-fields": "beta", "results-from": "termination-message", "enable-kubernetes-sidecar": "false"}
    for name, data in (("feature-flags", flags), ("config-defaults", {"default-timeout-minutes": "60", "default-service-account": "default"})):
        server.put("configmaps", objects.stored(objects.config_map(TEKTON_NAMESPACE, name, data), namespace=TEKTON_NAMESPACE, uid=server.next_uid(), version=server.next_version()))
    server.put("storageclasses", objects.stored(objects.storage_class(), namespace=None, uid=server.next_uid(), version=server.next_version()))
    node_names = []
    for i in range(shape.nodes):
        manifest = objects.kwok_node(f"{pool}-{i}", pool=pool, cpu=NODE_CPU, memory=NODE_MEMORY, pods=NODE_PODS, index=i)
        node = objects.with_kwok_status(objects.stored(manifest, namespace=None, uid=server.next_uid(), version=server.next_version()))
        server.put("nodes", node)
        node_names.append(node["metadata"]["name"])
    claims = [f"ws-{i}" for i in range(CLAIMS)]
    for claim in claims:
        volume, bound_claim = objects.bound_claim(namespace, claim, uid=server.next_uid(), version=server.next_version())
        server.put("persistentvolumes", volume)
        server.put("persistentvolumeclaims", bound_claim)
    workload = direct_workload(
        MIXES["tekton"], shape.pods, prefix="refdb", pvcs=claims, scheduler_name=bench_scheduler_name("reference"),
        pool_selector={POOL_LABEL: pool}, run_label="offline",
    )
    for run in workload.pipeline_runs:
        server.put("pipelineruns", objects.pending_pipeline_run(run, namespace=namespace, uid=server.next_uid(), version=server.next_version()))
    keys = []
    for manifest in workload.pods:
        pod = objects.pending_pod(manifest, namespace=namespace, uid=server.next_uid(), version=server.next_version())
        server.put("pods", pod)
        keys.append((namespace, pod["metadata"]["name"]))
    return World(namespace, pool, keys, node_names)


def offline_api_client(server: FakeApiServer, bucket: TokenBucket, on_request: Callable[[str], None]) -> kubernetes.client.ApiClient:
    """offline_api_client() is main.api_client()'s client, its socket replaced by the server."""
    configuration = kubernetes.client.Configuration()
    configuration.host = "https://offline.invalid:6443"
    configuration.retries = urllib3.Retry(total=3, connect=3, read=0, backoff_factor=0.2)
    configuration.connection_pool_maxsize = max(4, bucket.burst // 10)
    api = kubernetes.client.ApiClient(configuration)
    api.rest_client.pool_manager = FakePoolManager(server)  # type: ignore[assignment]
    limit_requests(api, bucket, on_request)
    return api


@dataclass
class Accounts:
    """Accounts is the run's CPU by what it was spent on (process CPU, the API server's own subtracted)."""

    seconds: dict[str, float] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, what: str, seconds: float) -> None:
        self.seconds[what] = self.seconds.get(what, 0.0) + seconds
        self.counts[what] += 1


class Timed:
    """Timed(accounts, server) times one piece of the run in process CPU, less what the API server spent inside it."""

    def __init__(self, accounts: Accounts, server: FakeApiServer) -> None:
        self._accounts, self._server = accounts, server

    def __call__(self, what: str, work: Callable[[], Any]) -> Any:
        cpu, served = time.process_time(), self._server.cpu_seconds
        try:
            return work()
        finally:
            self._accounts.add(what, (time.process_time() - cpu) - (self._server.cpu_seconds - served))


@dataclass
class Result:
    """Result is one offline run's figures."""

    nodes: int
    pods: int
    bound: int
    digest: str
    cpu_s: float  # the reference's CPU from its informers' start to the last write
    startup_cpu_s: float
    import_cpu_s: float
    server_cpu_s: float
    sim_seconds: float
    wall_s: float
    requests: dict[str, int]
    components: dict[str, float]
    counts: dict[str, int]
    unbound: int

    def ms_per_pod(self) -> float:
        return 1000 * self.cpu_s / max(1, self.bound)


def run_backlog(shape: Shape, *, profile: Path | None = None) -> Result:
    """run_backlog(Shape(1000, 600)) runs one offline backlog to its end and returns its figures."""
    server = FakeApiServer()
    world = build_world(server, shape)
    clock = SimClock()
    work = SerialWork()
    observability = Observability()
    main_bucket = TokenBucket(shape.qps, shape.burst, clock=clock, sleep=clock.advance)
    # Events have a bucket of their own, waited for on a thread of their own: it holds no one up here.
    events_bucket = TokenBucket(shape.qps, shape.burst, clock=clock, sleep=lambda seconds: None)
    api = offline_api_client(server, main_bucket, lambda verb: observability.api_request(ApiClientName.MAIN, verb))
    events_api = offline_api_client(server, events_bucket, lambda verb: observability.api_request(ApiClientName.EVENTS, verb))
    accounts = Accounts()
    timed = Timed(accounts, server)
    profilers: list[cProfile.Profile] = []
    with ExitStack() as stack:
        for module in (cluster_view, events, siblings):
            stack.enter_context(mock.patch.object(module, "time", clock))
        with mock.patch.object(scheduler_module, "Background", work.background), mock.patch.object(scheduler_module, "Lanes", work.lanes), \
                mock.patch.object(events, "Background", work.background):
            scheduler = Scheduler(
                api, events_api=events_api, scheduler_name=bench_scheduler_name("reference"), strategy=Strategy.LEAST_ALLOCATED,
                release_resync_seconds=RESYNC_SECONDS, percentage_of_nodes_to_score=0, tekton_namespace=TEKTON_NAMESPACE,
                on_coschedule=observability.set_coschedule_disabled, on_attempt=observability.attempt, on_release=observability.released,
            )
        scheduler.queue._clock = clock  # noqa: SLF001 - backoffs on the run's clock
        driver_profile = None
        if profile is not None:
            for informer in scheduler.informers:
                _profile_thread(informer, profilers)
            driver_profile = _THREAD_PROFILER.profiler = cProfile.Profile(time.thread_time)
            server.on_enter, server.on_leave = _pause_profiler, _resume_profiler
        started_wall, started_cpu = time.perf_counter(), time.process_time()
        served_before = server.cpu_seconds
        if driver_profile is not None:
            driver_profile.enable()
        timed("startup: list and sync", lambda: _start(scheduler, server))
        startup = accounts.seconds["startup: list and sync"]
        _drive(scheduler, server, work, clock, timed, shape, world, observability)
        if driver_profile is not None:
            driver_profile.disable()
            profilers.append(driver_profile)
        cpu = (time.process_time() - started_cpu) - (server.cpu_seconds - served_before)
        wall = time.perf_counter() - started_wall
        scheduler.stop()
        server.end_watches()
        for informer in scheduler.informers:
            informer._thread.join(timeout=10)  # noqa: SLF001
    if profile is not None:
        _dump(profilers, profile)
    bound = len(server.decisions.binds)
    digest = hashlib.sha256(repr(server.decisions.as_tuple()).encode()).hexdigest()[:16]
    return Result(
        nodes=shape.nodes, pods=len(world.pods), bound=bound, digest=digest, cpu_s=cpu, startup_cpu_s=startup, import_cpu_s=IMPORT_CPU_SECONDS,
        server_cpu_s=server.cpu_seconds, sim_seconds=clock.now - 1000.0, wall_s=wall, requests=dict(server.requests),
        components=dict(accounts.seconds), counts=dict(accounts.counts), unbound=len(world.pods) - bound,
    )


def _start(scheduler: Scheduler, server: FakeApiServer) -> None:
    """_start() starts the informers (each lists, then watches) and returns once every cache is synced and every watch open.

    As main.py's lead() does: the garbage collector off while the caches fill (runtime/heap.py), in a
    tree that has it; an older tree (the baseline of a --compare) starts them as its main.py did.
    """
    try:
        from reference_scheduler.runtime.heap import filling_caches
    except ImportError:
        scheduler.start_informers()
        return _await_watches(scheduler, server)
    with filling_caches():
        scheduler.start_informers()
    _await_watches(scheduler, server)


def _await_watches(scheduler: Scheduler, server: FakeApiServer) -> None:
    """_await_watches() returns once every informer's watch is open, and their first events are handled."""
    deadline = time.monotonic() + 60
    while server.open_watches() < len(scheduler.informers):
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {server.open_watches()} of {len(scheduler.informers)} watches opened")
        time.sleep(0.001)
    server.flush()


def _drive(
    scheduler: Scheduler, server: FakeApiServer, work: SerialWork, clock: SimClock, timed: Timed, shape: Shape, world: World, observability: Observability
) -> None:
    """_drive() is Scheduler.run()'s loop with its threads' work interleaved, serialised, on the simulated clock."""
    scheduler.check_coschedule()
    for pod in scheduler.pods.list(scheduler._is_ours_to_try):  # noqa: SLF001 - as run() does
        scheduler.queue.add((pod["metadata"].get("namespace") or "", pod["metadata"]["name"]))
    beats = _heartbeat_plan(world.node_names, clock.now, shape.seed) if shape.heartbeats else []
    jitter = random.Random(shape.seed + 1)
    next_gauge, next_resync = clock.now + GAUGE_SECONDS, clock.now + RESYNC_SECONDS
    beat_count = 0

    def flush() -> None:
        if server.pending_events():
            timed("events", server.flush)

    while True:
        while beats and beats[0][0] <= clock.now:
            due, index = heapq.heappop(beats)
            beat_count += 1
            server.heartbeat(world.node_names[index], beat_count, index)
            heapq.heappush(beats, (due + HEARTBEAT_SECONDS + jitter.uniform(0, HEARTBEAT_JITTER_SECONDS), index))
            timed("events: node heartbeats", server.flush)
        if clock.now >= next_gauge:
            next_gauge += GAUGE_SECONDS
            timed("gauges", lambda: _refresh_gauges(scheduler, observability))
        if clock.now >= next_resync:
            next_resync += RESYNC_SECONDS
            timed("releaser", lambda: scheduler.releaser.run_once(scheduler.stop_event))
            flush()
        if work.tasks and shape.lag is not None and len(work.tasks) > shape.lag:
            timed(f"writes: {work.tasks[0][0]}", work.run_one)
            flush()
            continue
        key = scheduler.queue.pop(timeout=0)
        if key is not None:
            timed("attempts", lambda: scheduler._schedule_one(key))  # noqa: SLF001 - one turn of run()'s loop
            flush()
            continue
        if work.tasks:
            timed(f"writes: {work.tasks[0][0]}", work.run_one)
            flush()
            continue
        waiting = scheduler.queue.lengths()
        if waiting["backoff"] and clock.now < 1000.0 + 600:
            clock.advance(0.1)  # nothing to do until a backoff ends
            continue
        return


def _refresh_gauges(scheduler: Scheduler, observability: Observability) -> None:
    """_refresh_gauges() is one turn of main.py's gauges thread."""
    observability.set_pending(scheduler.queue.lengths())
    observability.set_active_reservations(len(scheduler.view.active_reservations()))


def _heartbeat_plan(names: list[str], now: float, seed: int) -> list[tuple[float, int]]:
    """_heartbeat_plan() is each node's first heartbeat, spread over one period as KWOK's jitter leaves them."""
    rng = random.Random(seed)
    plan = [(now + rng.uniform(0, HEARTBEAT_SECONDS + HEARTBEAT_JITTER_SECONDS), i) for i in range(len(names))]
    heapq.heapify(plan)
    return plan


#: The profiler of the current thread, paused while the API server works (its CPU is not the reference's).
_THREAD_PROFILER = threading.local()


def _pause_profiler() -> None:
    profiler = getattr(_THREAD_PROFILER, "profiler", None)
    if profiler is not None:
        profiler.disable()


def _resume_profiler() -> None:
    profiler = getattr(_THREAD_PROFILER, "profiler", None)
    if profiler is not None:
        profiler.enable()


def _profile_thread(informer: Informer, profilers: list[cProfile.Profile]) -> None:
    """_profile_thread() makes the informer's thread run under a cProfile of its own (thread CPU time), kept in profilers."""
    run = informer._run  # noqa: SLF001

    def profiled() -> None:
        profiler = _THREAD_PROFILER.profiler = cProfile.Profile(time.thread_time)
        try:
            profiler.runcall(run)
        finally:
            profilers.append(profiler)

    informer._thread = threading.Thread(target=profiled, name=f"informer-{informer.name}", daemon=True)  # noqa: SLF001


def _dump(profilers: list[cProfile.Profile], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    stats = pstats.Stats(profilers[0])
    for more in profilers[1:]:
        stats.add(more)
    stats.dump_stats(str(out))


#: What profile_table() reports: (label, a piece of the file's path, the function), nested by indentation (shares overlap).
PROFILE_ENTRIES = (
    ("startup: the LISTs decoded and cached, their ADDED handlers", "runtime/informer.py", "_relist"),
    ("watch events: lines split and JSON decoded (kubernetes.watch)", "kubernetes/watch/watch.py", "unmarshal_event"),
    ("watch events: the informers' handlers", "runtime/informer.py", "_emit"),
    ("  queue.move_unschedulable (hints weighed)", "runtime/queue.py", "move_unschedulable"),
    ("  ClusterView._on_pod (pod index)", "runtime/cluster_view.py", "_on_pod"),
    ("  ClusterView._on_record", "runtime/cluster_view.py", "_on_record"),
    ("  Scheduler._on_pod", "runtime/scheduler.py", "_on_pod"),
    ("attempts (Scheduler._schedule_one)", "runtime/scheduler.py", "_schedule_one"),
    ("  ClusterView.node_views", "runtime/cluster_view.py", "node_views"),
    ("  ClusterView.active_reservations", "runtime/cluster_view.py", "active_reservations"),
    ("  the walk of the nodes (evaluate: checks, fit, score)", "runtime/cycle.py", "evaluate"),
    ("  the plan and the record's manifest (_create_record)", "runtime/cycle.py", "_create_record"),
    ("  the claim decided (_claim_later)", "runtime/cycle.py", "_claim_later"),
    ("    siblings placed (_place_siblings)", "runtime/cycle.py", "_place_siblings"),
    ("writes: record create", "runtime/records.py", "create"),
    ("writes: claim (change_group)", "runtime/records.py", "change_group"),
    ("writes: bind (_bind_now)", "runtime/cycle.py", "_bind_now"),
    ("writes: events (_write_event)", "runtime/events.py", "_write_event"),
    ("  the generated client's pydantic checks (validate_call)", "pydantic/_internal/_validate_call.py", "__call__"),
    ("  request building (ApiClient.param_serialize)", "kubernetes/client/api_client.py", "param_serialize"),
    ("  answers decoded (ApiClient.response_deserialize)", "kubernetes/client/api_client.py", "response_deserialize"),
    ("releaser (run_once)", "runtime/releaser.py", "run_once"),
)


def profile_table(path: Path, bound: int) -> str:
    """profile_table(prof, bound) is the profile's main pieces: cumulative CPU per bound pod and share of the profile's whole CPU.

    Under cProfile every call costs more, so the shares, not the milliseconds, compare with an unprofiled run.
    """
    stats = pstats.Stats(str(path))
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in table.values())
    rows = ["| piece (nested pieces are part of the one above) | ms per bound pod (profiled) | share |", "|---|---|---|"]
    for label, where, function in PROFILE_ENTRIES:
        cumulative = sum(entry[3] for (file, _, name), entry in table.items() if name == function and where in file)
        rows.append(f"| {label} | {1000 * cumulative / max(1, bound):.2f} | {100 * cumulative / total:.1f} % |")
    rows.append(f"| the whole profile | {1000 * total / max(1, bound):.2f} | 100 % |")
    return "\n".join(rows)


#: py-spy samples that are not the reference working: a thread waiting for the driver or an event, the API server, the world's set-up.
SPY_WAITS = ("WatchResponse.stream (", "WatchResponse.deliver (", "Condition.wait (", "Semaphore.acquire (")
SPY_NOT_REFERENCE = ("bench/fake_api.py", "bench/offline_objects.py")


def spy_shares(raw: str) -> tuple[int, Counter[str]]:
    """spy_shares(py-spy's raw output) is (the samples of the reference at work, their count per PROFILE_ENTRIES label).

    A sample counts when it is inside run_backlog or an informer's thread, is not waiting
    (SPY_WAITS: the serialised run's hand-offs) and is not in the API server's own code.
    """
    total, found = 0, Counter[str]()
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not any(f.startswith(("run_backlog (", "Informer._run (")) for f in frames):
            continue
        if frames[-1].startswith(SPY_WAITS) or any(where in f for f in frames for where in SPY_NOT_REFERENCE):
            continue
        total += int(count)
        for label, where, function in PROFILE_ENTRIES:
            if any(f.split(" (")[0].rsplit(".", 1)[-1] == function and where in f for f in frames):
                found[label] += int(count)
    return total, found


def spy_table(raw: str, ms_per_pod: float) -> str:
    """spy_table(raw, 6.4) is PROFILE_ENTRIES' shares of py-spy's samples, applied to an unprofiled run's CPU per pod."""
    total, found = spy_shares(raw)
    rows = ["| piece (nested pieces are part of the one above) | ms per bound pod | share |", "|---|---|---|"]
    for label, _, _ in PROFILE_ENTRIES:
        share = found[label] / max(1, total)
        rows.append(f"| {label} | {ms_per_pod * share:.2f} | {100 * share:.1f} % |")
    rows.append(f"| all the reference's samples ({total}) | {ms_per_pod:.2f} | 100 % |")
    return "\n".join(rows)


def spied(py_spy: str, nodes: int, extra: list[str]) -> int:
    """spied() runs one offline backlog under `py-spy record` (every thread, 250 Hz) and prints where its samples went."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "spy.txt"
        out = subprocess.run(
            [py_spy, "record", "--rate", "250", "--threads", "--format", "raw", "-o", str(raw), "--",
             sys.executable, "-m", "bench.offline_backlog", "--nodes", str(nodes), "--json", *extra],
            capture_output=True, text=True, check=True,
        ).stdout
        got = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])  # py-spy says its own lines too
        print(f"nodes={nodes} bound={got['bound']} digest={got['digest']}: {got['ms_per_pod']:.2f} ms/pod under py-spy")
        print(spy_table(raw.read_text(), got["ms_per_pod"]))
    return 0


def result_line(result: Result) -> str:
    """result_line(result) is the one-line summary a run prints."""
    return (
        f"nodes={result.nodes} pods={result.pods} bound={result.bound} digest={result.digest} "
        f"cpu={result.cpu_s:.3f}s ({result.ms_per_pod():.2f} ms/pod; startup {result.startup_cpu_s:.3f}s) "
        f"import={result.import_cpu_s:.3f}s server={result.server_cpu_s:.3f}s sim={result.sim_seconds:.1f}s wall={result.wall_s:.2f}s"
    )


def component_table(result: Result) -> str:
    """component_table(result) is a markdown table: component, ms per bound pod, share of the run's CPU."""
    rows = ["| component | ms per bound pod | share | count |", "|---|---|---|---|"]
    total = sum(result.components.values())
    for what, seconds in sorted(result.components.items(), key=lambda item: -item[1]):
        rows.append(f"| {what} | {1000 * seconds / max(1, result.bound):.2f} | {100 * seconds / total:.1f} % | {result.counts.get(what, 0)} |")
    rows.append(f"| total | {1000 * total / max(1, result.bound):.2f} | 100 % | |")
    return "\n".join(rows)


def json_from_tree(argv: list[str], tree: str, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> Obj:
    """json_from_tree(argv, tree) runs a driver in `tree`, first on its PYTHONPATH, and is the JSON of its output's last line."""
    out = run(argv, env={**os.environ, "PYTHONPATH": tree}, cwd=tree, capture_output=True, text=True, check=True).stdout
    got: Obj = json.loads(out.strip().splitlines()[-1])
    return got


def compare(trees: list[str], sizes: list[int], turns: int, extra: list[str]) -> int:
    """compare() runs each size in each tree in fresh processes, in turns (tree A, tree B, tree A, ...), and prints the spread.

    Each tree runs its own bench/offline_backlog.py (`python -m` puts the working directory first
    on sys.path): a tree to compare must hold the driver, e.g. a worktree of the commit that added it.
    """
    runs: dict[tuple[str, int], list[Obj]] = {}
    for turn in range(turns):
        for nodes in sizes:
            for tree in trees:
                got = json_from_tree([sys.executable, "-m", "bench.offline_backlog", "--nodes", str(nodes), "--json", *extra], tree)
                runs.setdefault((tree, nodes), []).append(got)
                print(f"turn {turn + 1} {tree} nodes={nodes}: {got['ms_per_pod']:.2f} ms/pod, import {got['import_cpu_s']:.2f}s, digest {got['digest']}", flush=True)
    for nodes in sizes:
        for tree in trees:
            got = runs[(tree, nodes)]
            each = [g["ms_per_pod"] for g in got]
            with_import = [g["ms_per_pod"] + 1000 * g["import_cpu_s"] / max(1, g["bound"]) for g in got]
            print(
                f"nodes={nodes} {tree}: median {statistics.median(each):.2f} ms/pod (runs {', '.join(f'{e:.2f}' for e in each)}); "
                f"with the import {statistics.median(with_import):.2f} ms/pod (runs {', '.join(f'{e:.2f}' for e in with_import)}); "
                f"digests {sorted({g['digest'] for g in got})}"
            )
    print(median_components(runs, trees, sizes))
    return 0


def median_components(runs: dict[tuple[str, int], list[Obj]], trees: list[str], sizes: list[int]) -> str:
    """median_components() is a markdown table: each component's median ms per bound pod, per size and tree."""
    header = [f"{nodes} nodes, {Path(tree).name}" for nodes in sizes for tree in trees]
    names = sorted({name for got in runs.values() for g in got for name in g["components"]})
    rows = ["| component | " + " | ".join(header) + " |", "|---|" + "---|" * len(header)]
    for name in [*names, "import"]:
        cells = []
        for nodes in sizes:
            for tree in trees:
                got = runs[(tree, nodes)]
                seconds = [g["import_cpu_s"] if name == "import" else g["components"].get(name, 0.0) for g in got]
                cells.append(f"{1000 * statistics.median(seconds) / max(1, got[0]['bound']):.2f}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.offline_backlog", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="1000", help="node count, or a comma-separated list with --compare")
    parser.add_argument("--pods", type=int, default=None, help="backlog pods (default: make bench's, 300/600/300 at 100/1000/5000 nodes)")
    parser.add_argument("--lag", type=int, default=None, help="writes allowed to wait before one runs (default: until the queue is empty)")
    parser.add_argument("--qps", type=float, default=50.0)
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--no-heartbeats", action="store_true")
    parser.add_argument("--profile", type=Path, default=None, help="write a cProfile (every thread, thread CPU time) here")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.add_argument("--compare", nargs="+", default=None, metavar="TREE", help="run in each tree (PYTHONPATH) in turns; with --turns")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--spy", default=None, metavar="PY_SPY", help="run under this py-spy binary and print where the samples went")
    args = parser.parse_args(argv)
    extra = [*(["--lag", str(args.lag)] if args.lag is not None else []), *(["--no-heartbeats"] if args.no_heartbeats else [])]
    if args.compare:
        return compare(args.compare, [int(n) for n in args.nodes.split(",")], args.turns, extra)
    if args.spy:
        return spied(args.spy, int(args.nodes), extra)
    configure_logging("info", "text")
    for handler in logging.getLogger().handlers:  # the bench's scheduler logs to a file; here the lines go nowhere
        handler.setStream(open(os.devnull, "w"))  # type: ignore[attr-defined]  # noqa: SIM115
    nodes = int(args.nodes)
    shape = Shape(nodes, args.pods or BACKLOG_PODS.get(nodes, 300), qps=args.qps, burst=args.burst, lag=args.lag, heartbeats=not args.no_heartbeats)
    result = run_backlog(shape, profile=args.profile)
    if args.json:
        print(json.dumps({**result.__dict__, "ms_per_pod": result.ms_per_pod(), "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
    else:
        print(result_line(result))
        print(component_table(result))
        print("requests:", ", ".join(f"{k} {v}" for k, v in sorted(result.requests.items())))
        if args.profile is not None:
            print(profile_table(args.profile, result.bound))
    return 0 if result.unbound == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
