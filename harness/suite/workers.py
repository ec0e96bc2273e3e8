"""Concurrent scenarios: pytest-xdist workers, each with its own scheduler, sharing one cluster.

`pytest -n 2` runs scenarios two at a time. Each scenario already has its own
namespace and its own node pool, so two of them never share a node; what they
share is the control plane, Tekton and, for a scheduler the suite starts, the
scheduler's name. So:

- each worker starts its own scheduler under `<name>-<worker>` (`tkn-scheduler-gw0`):
  a scenario that kills its scheduler (Restart) kills only its own, and two
  leaderless schedulers never serve the same pods. An external scheduler
  (`--scheduler external`) keeps its one name and serves every worker's pools;
- the controller takes the local cluster's lock and brings the cluster up once,
  before the workers start, and takes it down at the end (unless --keep-cluster);
- a scenario that acts on the whole cluster (restarts the API server, etcd, Tekton)
  is `Scenario.exclusive`: it waits until no other scenario runs, and none starts
  while it runs (ScenarioSlots);
- a scenario that changes Tekton's settings (`Scenario.tekton_settings`) runs in
  the Tekton settings window: beside the other such scenarios (each changes keys
  no other one does, and none of their runs reads another's), never beside a
  scenario that runs with Tekton as installed;
- both are handed out last (slots_last), the window before those that run alone.
"""

from __future__ import annotations

import ast
import contextlib
import enum
import fcntl
import logging
import os
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, Sequence, TypeVar

import pytest

from harness.suite.scenario import Scenario
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig
from harness.waits import NotYet, WaitTimeout, wait_for

T = TypeVar("T")

#: Set by the controller for its workers: the directory of the ScenarioSlots lock files.
SLOTS_ENV = "RESCON_SCENARIO_SLOTS"
#: In that directory: the node id of every test a worker has started, one a line (ScenarioSlots.note_started).
STARTED_FILE = "started"

log = logging.getLogger("rescon.workers")


def worker_id(config: pytest.Config) -> str | None:
    """worker_id() is "gw0", "gw1", ... in a pytest-xdist worker, None in the controller or a plain session."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["workerid"]) if workerinput else None


def is_controller(config: pytest.Config) -> bool:
    """is_controller() is True in the process that hands scenarios to xdist workers (`-n N`, N >= 1)."""
    return worker_id(config) is None and bool(getattr(config.option, "numprocesses", None))


def runs_scenarios(args: list[str], root: Path) -> bool:
    """runs_scenarios() is True when the session's paths hold a conformance scenario (a module with `SCENARIO = Scenario(`).

    The xdist controller collects nothing itself, so this is how it knows
    whether its workers will need the cluster (`pytest tests/unit -n 2` does not).
    Hidden and site-packages directories below a path are skipped, the path
    itself never is: `rescon conformance` passes the installed scenarios' path.
    """
    for arg in args or ["."]:
        path = (root / arg.split("::")[0]).resolve()
        found = [path] if path.is_file() else sorted(path.rglob("test_*.py")) if path.is_dir() else []
        files = [f for f in found if not any(part.startswith(".") or part == "site-packages" for part in f.relative_to(path).parts[:-1])] if path.is_dir() else found
        if any(_declares_scenario(f.read_text(encoding="utf-8", errors="replace")) for f in files):
            return True
    return False


def _declares_scenario(source: str) -> bool:
    """_declares_scenario() is True for a module that assigns `SCENARIO = Scenario(...)` at its top level.

    Parsed, not searched: a unit test that writes a scenario module from a string
    holds the same text, and `pytest tests/unit` must never wait for the local cluster.
    """
    if "SCENARIO = Scenario(" not in source:
        return False
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "SCENARIO" for t in node.targets)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "Scenario"
        for node in tree.body
    )


def scheduler_name_for(base: str, *, mode: str, worker: str | None) -> str:
    """scheduler_name_for('tkn-scheduler', mode='reference', worker='gw1') == 'tkn-scheduler-gw1'.

    A scheduler the suite starts gets one per worker; an external one keeps its name.
    """
    if worker is None or mode == "external":
        return base
    return f"{base}-{worker}"


class Slot(enum.Enum):
    """Slot is whom a scenario may run beside (ScenarioSlots); handed out in this order."""

    #: Beside any other shared scenario: Tekton as installed, the cluster left alone.
    SHARED = 0
    #: Beside the other scenarios that change Tekton's settings (`Scenario.tekton_settings`), never a shared one.
    TEKTON_SETTINGS = 1
    #: Beside no other scenario: it restarts a cluster component (`Scenario.exclusive`, `Scenario.restarts`).
    ALONE = 2


class ScenarioSlots:
    """ScenarioSlots lets scenarios of one Slot run side by side, and keeps the others out.

    Three flock files. A shared scenario holds `shared` shared, a window's
    scenario holds `window` shared, one that runs alone holds both exclusively.
    Each enters through the `turnstile`. A scenario that runs alone, or in the
    window, holds it while it waits for the running ones to end (an exclusive
    hold of `shared`, let go at once for the window), so workers that keep
    starting shared scenarios do not starve it. A shared scenario that finds the
    window open lets go of the turnstile and waits for the window to close: the
    window's other scenarios, handed out last and few, go in meanwhile, rather
    than each waiting for the whole window and then for the late shared one.

    A scenario of the window, or one that runs alone, first waits for every
    test handed out before it to have started (`after`). xdist gives each worker
    its next test while the current one runs, so the last shared scenarios may
    still be queued behind others when the window's first scenario is free: had
    it taken the turnstile, they would wait for it, and the window's other
    scenarios, handed out only as workers finish, for them. On kind that split
    the window in two around five shared scenarios; started first, the late
    shared ones run beside the ones still running.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @classmethod
    def from_env(cls) -> ScenarioSlots | None:
        directory = os.environ.get(SLOTS_ENV)
        return cls(Path(directory)) if directory else None

    def _open(self, name: str) -> IO[str]:
        self.directory.mkdir(parents=True, exist_ok=True)
        return open(self.directory / name, "a+", encoding="utf-8")  # noqa: SIM115 - closed by the caller's ExitStack

    def note_started(self, nodeid: str) -> None:
        """note_started() records that a test began (every test of every worker, before its fixtures)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with open(self.directory / STARTED_FILE, "a", encoding="utf-8") as out:  # one short write per line: whole lines from concurrent workers
            out.write(nodeid + "\n")

    def not_started(self, nodeids: Iterable[str]) -> list[str]:
        """not_started() is those of `nodeids` no worker has started yet, in their order."""
        try:
            started = set((self.directory / STARTED_FILE).read_text(encoding="utf-8").splitlines())
        except FileNotFoundError:
            started = set()
        return [nodeid for nodeid in nodeids if nodeid not in started]

    def wait_started(self, nodeids: Sequence[str], timeouts: TimeoutConfig = DEFAULT_TIMEOUTS) -> None:
        """wait_started() returns once every one of `nodeids` has started; after `earlier_slots_started` it returns anyway.

        Only the order of scenarios hangs on it, never a verdict: a test that never starts
        (a worker lost, its tests sent to another late) costs the wait, not the session.
        """

        def poll() -> None:
            missing = self.not_started(nodeids)
            if missing:
                raise NotYet(f"{len(missing)} of {len(nodeids)} not started, {missing[0]} first")

        try:
            wait_for(poll, what="the tests handed out before this one to start", timeout="earlier_slots_started", timeouts=timeouts)
        except WaitTimeout as err:
            log.warning("%s; going in anyway", err)

    @contextlib.contextmanager
    def hold(
        self, slot: Slot, settings: Sequence[str] = (), *, after: Sequence[str] = (), timeouts: TimeoutConfig = DEFAULT_TIMEOUTS
    ) -> Iterator[None]:
        """hold() is the scenario's place; in the window it also holds each of its `settings` alone.

        Two scenarios of the window never change one setting (a unit test checks it), but two
        copies of one scenario (`pytest --count 10 -n 3`) would: the second waits, in the window,
        for the first to put the setting back. A scenario that keeps shared ones out first waits
        for the tests `after` (those handed out before it: earlier_nodeids()) to have started.
        """
        if slot is not Slot.SHARED and after:
            self.wait_started(after, timeouts)
        with contextlib.ExitStack() as stack:
            turnstile, shared, window = (stack.enter_context(self._open(name)) for name in ("turnstile", "shared", "window"))
            if slot is Slot.SHARED:
                _enter_beside_no_window(turnstile, shared, window)
            elif slot is Slot.TEKTON_SETTINGS:
                fcntl.flock(turnstile.fileno(), fcntl.LOCK_EX)
                fcntl.flock(shared.fileno(), fcntl.LOCK_EX)
                fcntl.flock(shared.fileno(), fcntl.LOCK_UN)
                fcntl.flock(window.fileno(), fcntl.LOCK_SH)
                fcntl.flock(turnstile.fileno(), fcntl.LOCK_UN)
                # In one order, so that no two scenarios each wait for a setting the other holds.
                for setting in sorted(set(settings)):
                    held = stack.enter_context(self._open(f"setting-{setting.replace('/', '--')}"))
                    fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # let go when the ExitStack closes the file
            else:
                fcntl.flock(turnstile.fileno(), fcntl.LOCK_EX)
                fcntl.flock(shared.fileno(), fcntl.LOCK_EX)
                fcntl.flock(window.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                for held in (window, shared, turnstile):
                    fcntl.flock(held.fileno(), fcntl.LOCK_UN)


def _enter_beside_no_window(turnstile: IO[str], shared: IO[str], window: IO[str]) -> None:
    """_enter_beside_no_window() takes a shared scenario's hold once no window is open, the turnstile free meanwhile."""
    while True:
        fcntl.flock(turnstile.fileno(), fcntl.LOCK_EX)
        try:
            fcntl.flock(window.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fcntl.flock(turnstile.fileno(), fcntl.LOCK_UN)
            # Blocks until the window closes; then the turnstile is taken again, behind any scenario waiting there.
            fcntl.flock(window.fileno(), fcntl.LOCK_EX)
            fcntl.flock(window.fileno(), fcntl.LOCK_UN)
            continue
        fcntl.flock(window.fileno(), fcntl.LOCK_UN)
        fcntl.flock(shared.fileno(), fcntl.LOCK_SH)
        fcntl.flock(turnstile.fileno(), fcntl.LOCK_UN)
        return


def slot_of(scenario: Scenario) -> Slot:
    """slot_of() is whom the scenario may run beside: a restart is everyone's outage, Tekton's settings every run's."""
    if scenario.exclusive or scenario.restarts:
        return Slot.ALONE
    return Slot.TEKTON_SETTINGS if scenario.tekton_settings else Slot.SHARED


def scenario_slot(scenario: Scenario, *, after: Sequence[str] = (), timeouts: TimeoutConfig = DEFAULT_TIMEOUTS) -> contextlib.AbstractContextManager[None]:
    """scenario_slot() is this scenario's place among concurrent ones (slot_of); nothing in a plain session."""
    slots = ScenarioSlots.from_env()
    if slots is None:
        return contextlib.nullcontext()
    return slots.hold(slot_of(scenario), scenario.tekton_settings, after=after, timeouts=timeouts)


def note_started(nodeid: str) -> None:
    """note_started() records a worker's test as begun, for the scenarios that wait for it (ScenarioSlots.hold's `after`)."""
    slots = ScenarioSlots.from_env()
    if slots is not None:
        slots.note_started(nodeid)


def earlier_nodeids(items: Sequence[T], mine: Slot, *, slot_of: Callable[[T], Slot], nodeid_of: Callable[[T], str]) -> list[str]:
    """earlier_nodeids() is the node ids of the session's tests handed out before a scenario of slot `mine` (slots_last).

    Example: with only 'W' of the window, earlier_nodeids(['a', 'W', 'b'], Slot.TEKTON_SETTINGS, ...) == ['a', 'b'];
    for a shared scenario it is [].
    """
    return [nodeid_of(item) for item in items if slot_of(item).value < mine.value]


def slots_last(items: Sequence[T], *, slot_of: Callable[[T], Slot]) -> list[T]:
    """slots_last() keeps the order of `items` within each Slot: the shared ones first, then the window's, then those alone.

    A scenario that keeps others out waits for every running one to end and keeps
    the other workers idle while it runs: in the middle of a session that idles
    every worker for as long as the longest scenario then running (35 s in `make
    e2e` at 039c716); handed out last, it waits only for the session's last
    scenarios, which the other workers would finish alone anyway.
    Example: slots_last(['a', 'X', 'b'], slot_of=lambda i: Slot.ALONE if i.isupper() else Slot.SHARED) == ['a', 'b', 'X'].
    """
    return sorted(items, key=lambda item: slot_of(item).value)


def largest_pool_first(items: Sequence[T], *, pool_count_of: Callable[[T], int]) -> list[T]:
    """largest_pool_first() hands out first the one item whose pool has the most nodes; the others keep their order.

    Where pools are claimed from shared slot nodes (kind's workers, an existing
    cluster's slots), a claim larger than what is free holds the claim lock while
    it waits for running scenarios to give theirs back, and every claim behind it
    waits too (harness.cluster.slot_pools.claim_turn). At the session's start every
    slot is free. On kind `node_checks` (seven of twelve) handed out mid-run kept
    six scenarios waiting 30-48 s each in CI at 56aa0c5.
    Example: with pools a 2, b 7, c 7, d 1: ['a', 'b', 'c', 'd'] -> ['b', 'a', 'c', 'd'].
    """
    if not items:
        return []
    largest = max(range(len(items)), key=lambda index: pool_count_of(items[index]))  # max() keeps the first of equals
    return [items[largest], *items[:largest], *items[largest + 1:]]

