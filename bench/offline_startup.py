"""Offline start: the reference scheduler's CPU from its process's start to its caches synced, phase by phase, with no cluster.

    python -m bench.offline_startup --nodes 100                                 # 5 fresh processes: each phase's median
    python bench/offline_startup.py --compare BEFORE_TREE AFTER_TREE --turns 5   # each tree in turns (PYTHONPATH=tree)

`make bench` reads the scheduler's whole CPU (bench/summary.py cpu_seconds_per_pod), so what the
reference spends before its first bind counts as much as its attempts: at 100 nodes and 300 pods,
every 0.3 s of start is 1 ms per bound pod. This walks main.py's serve() as a bench run takes it
(--no-leader-elect, --metrics-port 0), each phase timed in process CPU (getrusage, as the bench's
sampler reads /proc): the interpreter's own start (before the first line: site, the venv's .pth
files), `import reference_scheduler.main`, the settings and the log, the two API clients (main.py's
api_client() from a kubeconfig written here, their sockets then replaced by bench/fake_api.py), the
records check, `Scheduler()`, the informers' first LISTs decoded into the caches (less the API
server's own CPU) and run()'s queue filled from them. The world is bench/offline_backlog.py's
backlog. Not counted: the sockets and TLS, which a cluster adds.

Every run is a fresh process, so the imports are measured cold, and whether the reference's bytecode
is compiled (`__pycache__`, or PYTHONDONTWRITEBYTECODE with none) matters here as on the cluster.
"""

from __future__ import annotations

import resource
import time


def _process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


_STARTED = _process_cpu()
import reference_scheduler.main as scheduler_main  # noqa: E402 - what the scheduler's process imports, timed

_IMPORTED = _process_cpu()

import argparse  # noqa: E402
import base64  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable  # noqa: E402

from kubernetes.client import ApiClient  # noqa: E402

from bench import offline_backlog  # noqa: E402
from bench.fake_api import FakeApiServer, FakePoolManager  # noqa: E402
from bench.schedulers import bench_scheduler_name  # noqa: E402
from reference_scheduler.config import parse_config  # noqa: E402
from reference_scheduler.runtime.heap import filling_caches  # noqa: E402
from reference_scheduler.runtime.observability import ApiClientName, Observability, configure_logging  # noqa: E402
from reference_scheduler.runtime.scheduler import Scheduler  # noqa: E402

#: The phases, in the order serve() takes them.
PHASES = (
    "interpreter", "import", "settings and log", "clients", "records check", "Scheduler()", "first lists", "queue filled",
)


def kubeconfig_text(workdir: Path) -> str:
    """kubeconfig_text(dir) is a kind-shaped kubeconfig (inline CA, client certificate and key, RSA-2048 as kind's); nothing ever connects with it.

    The certificates are real, made in `dir` with the openssl command: the client loads them into its
    TLS context when it is made (reference_scheduler/runtime/tls.py), as the scheduler does at start.
    """

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=workdir, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=offline-ca")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj", "/O=system:masters/CN=offline-admin")
    openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.crt", "-days", "2")
    ca, cert, key = (base64.b64encode((workdir / name).read_bytes()).decode() for name in ("ca.crt", "client.crt", "client.key"))
    return (
        "apiVersion: v1\nkind: Config\ncurrent-context: offline\npreferences: {}\n"
        f"clusters:\n- name: offline\n  cluster:\n    server: https://offline.invalid:6443\n    certificate-authority-data: {ca}\n"
        "contexts:\n- name: offline\n  context:\n    cluster: offline\n    user: offline\n"
        f"users:\n- name: offline\n  user:\n    client-certificate-data: {cert}\n    client-key-data: {key}\n"
    )


class Phases:
    """Phases times serve()'s steps one after another in process CPU; `skip()` leaves the driver's own work out."""

    def __init__(self) -> None:
        self.seconds = {"interpreter": _STARTED, "import": _IMPORTED - _STARTED}
        self._mark = _process_cpu()

    def skip(self) -> None:
        self._mark = _process_cpu()

    def done(self, phase: str, *, less: float = 0.0) -> None:
        now = _process_cpu()
        self.seconds[phase] = self.seconds.get(phase, 0.0) + (now - self._mark) - less
        self._mark = now


def start_once(nodes: int) -> dict[str, float]:
    """start_once(100) takes this process through serve()'s start against a backlog of `nodes` nodes, and is each phase's CPU seconds."""
    phases = Phases()
    server = FakeApiServer()
    offline_backlog.build_world(server, offline_backlog.Shape(nodes, offline_backlog.BACKLOG_PODS.get(nodes, 300)))
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        kubeconfig.write_text(kubeconfig_text(Path(tmp)))
        phases.skip()
        config = parse_config([
            "--kubeconfig", str(kubeconfig), "--scheduler-name", bench_scheduler_name("reference"),
            "--no-leader-elect", "--metrics-port", "0", "--log-format", "text", "--qps", "50", "--burst", "100",
            "--tekton-namespace", offline_backlog.TEKTON_NAMESPACE,
        ])
        configure_logging(config.log_level, config.log_format)
        for handler in logging.getLogger().handlers:  # the lines go nowhere, as in bench/offline_backlog.py
            handler.setStream(open(os.devnull, "w"))  # type: ignore[attr-defined]  # noqa: SIM115
        observability = Observability()
        phases.done("settings and log")

        def client(name: ApiClientName) -> ApiClient:
            api = scheduler_main.api_client(config, on_request=lambda verb: observability.api_request(name, verb))
            api.rest_client.pool_manager = FakePoolManager(server)  # type: ignore[assignment]
            return api

        api = client(ApiClientName.MAIN)
        events_api = client(ApiClientName.EVENTS)
        phases.done("clients")
        served = server.cpu_seconds
        scheduler_main.check_records_api(api)
        phases.done("records check", less=server.cpu_seconds - served)
    scheduler = Scheduler(
        api, events_api=events_api, scheduler_name=config.scheduler_name, strategy=config.score_strategy,
        release_resync_seconds=config.release_resync_seconds, percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        volume_binding_timeout=config.volume_binding_timeout, tekton_namespace=config.tekton_namespace,
        on_coschedule=observability.set_coschedule_disabled, on_attempt=observability.attempt, on_release=observability.released,
    )
    phases.done("Scheduler()")
    served = server.cpu_seconds
    with filling_caches():
        scheduler.start_informers()
    phases.done("first lists", less=server.cpu_seconds - served)
    scheduler.check_coschedule()
    for pod in scheduler.pods.list(scheduler._is_ours_to_try):  # noqa: SLF001 - as run() does before its loop
        scheduler.queue.add((pod["metadata"].get("namespace") or "", pod["metadata"]["name"]))
    phases.done("queue filled")
    scheduler.stop()
    server.end_watches()
    return phases.seconds


def compare(trees: list[str], nodes: int, turns: int, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> str:
    """compare() starts each tree `turns` times in fresh processes, in turns, and is a markdown table of each phase's median ms.

    The tree goes first on PYTHONPATH; the driver is this file, run by its path, so a tree to compare
    needs only bench/offline_backlog.py and bench/fake_api.py, not this driver.
    """
    runs: dict[str, list[dict[str, float]]] = {tree: [] for tree in trees}
    for _ in range(turns):
        for tree in trees:
            # -P: this file's directory (bench/) stays off sys.path, so `bench` is the tree's package.
            argv = [sys.executable, "-P", str(Path(__file__).resolve()), "--once", "--nodes", str(nodes)]
            runs[tree].append(offline_backlog.json_from_tree(argv, tree, run))
    return phase_table(runs)


def phase_table(runs: dict[str, list[dict[str, float]]]) -> str:
    """phase_table({tree: [phases, ...]}) is each phase's median and range in ms, per tree, and the medians' total."""
    names = [Path(tree).name or tree for tree in runs]
    rows = ["| phase, ms of CPU | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for phase in (*PHASES, "total"):
        cells = []
        for got in runs.values():
            each = [sum(g.values()) if phase == "total" else g.get(phase, 0.0) for g in got]
            cells.append(f"{1000 * statistics.median(each):.0f} ({1000 * min(each):.0f}–{1000 * max(each):.0f})")
        rows.append(f"| {phase} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.offline_startup", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--turns", type=int, default=5, help="fresh processes per tree")
    parser.add_argument("--compare", nargs="+", default=None, metavar="TREE", help="trees to start in turns (default: the one this runs from)")
    parser.add_argument("--once", action="store_true", help="start once, in this process, and print the phases as one JSON line")
    args = parser.parse_args(argv)
    if args.once:
        print(json.dumps(start_once(args.nodes)))
        return 0
    trees = args.compare or [str(Path(__file__).resolve().parent.parent)]
    print(compare(trees, args.nodes, args.turns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
