"""The pytest plugin: options, the cluster and scheduler under test, scenario runs, and the reports.

Registered through the `pytest11` entry point, so `pytest` in any checkout of
a scheduler's repository finds it once this package is installed. A test
module that defines `SCENARIO = Scenario(...)` is a conformance scenario: the
plugin skips it when a declared feature is unsupported, gives its test a
`run` (namespace, node pool, PVCs, fixtures), cleans up afterwards, and puts
it in the ConformanceReport.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import pytest
from _pytest._code.code import ExceptionRepr

from harness.errors import HarnessError
from harness.report.conformance_report import unsupported_message
from harness.suite.features import OPT_IN_FEATURES, Feature, parse_features, resolve_supported
from harness.report.attempts import log_tail
from harness.suite.scenario import Scenario, provider_rules_out
from harness.suite.seeds import take_seed
from harness.suite.scheduler_under_test import MODES, default_features
from harness.suite import scenario_seconds
from harness.suite.workers import Slot, earlier_nodeids, largest_pool_first, note_started, slot_of, slots_last, worker_id
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig, parse_override

if TYPE_CHECKING:
    from harness.monitor.latencies import Latencies

CLUSTERS = ("local", "kind", "existing")
#: Report metadata when the command line gives none: never the reference's name for another scheduler.
DEFAULT_ORGANIZATION = {"reference": "reservation-conformance", "kube-scheduler": "kubernetes"}
DEFAULT_PROJECT = {"reference": "reference-scheduler", "kube-scheduler": "kube-scheduler"}
#: The modes whose launches the suite may give a Lease (leader-electing replicas, a config template's lease_name).
LEASE_MODES = ("reference", "command")
COSCHEDULE_MODES = ("disabled", "workspaces", "pipelineruns", "isolate-pipelinerun")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    group = parser.getgroup("rescon", "reservation-conformance")
    kind_will_define = _pytest_kind_will_load(pluginmanager)
    group.addoption("--scheduler-name", default="tkn-scheduler", help="the schedulerName under test (default: tkn-scheduler)")
    group.addoption("--scheduler", default="reference", choices=MODES, help="what serves that name (default: reference)")
    group.addoption("--scheduler-cmd", default=None, help="with --scheduler command: the launch command, with {kubeconfig}, {scheduler_name} and {config}")
    group.addoption(
        "--scheduler-config-template", default=None, metavar="FILE",
        help="a jinja2 config file (a KubeSchedulerConfiguration, say) rendered per launch with scheduler_name, kubeconfig, port and lease_name; its path is {config} in --scheduler-cmd",
    )
    group.addoption(
        "--scheduler-replica-cmd", default=None,
        help="with --scheduler command: how to launch one of two leader-electing replicas (Resilience: leader_failover), with {kubeconfig}, {scheduler_name}, {config}, {lease_name} and {lease_namespace}",
    )
    group.addoption("--scheduler-pod-selector", default=None, help="with --scheduler external: label selector of the scheduler's pods, deleted to restart it (Restart)")
    group.addoption("--cluster", default="local", choices=CLUSTERS, help="local (default), kind or existing")
    # pytest-kind (the kind provider's library) defines --kubeconfig and --keep-cluster with the
    # same meaning; whichever plugin loads first owns them.
    _add_shared(group, "--kubeconfig", kind_will_define, default=None, help="kubeconfig of an existing cluster")
    group.addoption("--context", default=None, help="kubeconfig context of an existing cluster")
    group.addoption("--coschedule", default="disabled", choices=COSCHEDULE_MODES, help="Tekton's coschedule mode on local/kind (baselines)")
    group.addoption("--supported-features", default=None, help="comma-separated features the implementation supports")
    group.addoption("--exempt-features", default=None, help="comma-separated features to leave untested")
    group.addoption(
        "--with-features", default=None,
        help="comma-separated features to test on top of the supported ones, such as an opt-in feature (make e2e: Generative)",
    )
    group.addoption("--all-features", action="store_true", help="test every feature")
    group.addoption("--resize-floor-cpu", default="10m", help="the CPU request the Resize feature lowers lingering pods to (default 10m)")
    group.addoption("--report-output", default=None, help="write the ConformanceReport YAML here")
    group.addoption(
        "--contract-keep-going", action="store_true",
        help="the contract monitor fails a scenario at its end with every rule broken, not at the first violation (shows all of a scheduler's faults; slower)",
    )
    group.addoption("--implementation-organization", default=None, help="report metadata (default: ours for the reference and kube-scheduler, else 'unspecified')")
    group.addoption("--implementation-project", default=None, help="report metadata (default: the reference, kube-scheduler, or the schedulerName)")
    group.addoption("--implementation-url", default="")
    group.addoption("--implementation-version", default="dev")
    group.addoption("--implementation-contact", default="")
    _add_shared(group, "--keep-cluster", kind_will_define, action="store_true", help="do not tear the cluster down at the end")
    group.addoption(
        "--rescon-generative-seed", type=int, default=None, metavar="N",
        help="the Generative scenario's seed: the same seed draws the same runs (default: a new seed each session, printed)",
    )
    group.addoption(
        "--rescon-generative-runs", type=int, default=4, metavar="N",
        help="how many PipelineRuns the Generative scenario draws and judges, two or three at a time (default 4)",
    )
    group.addoption(
        "--rerun-failures", type=int, default=0, metavar="N",
        help="run a failed scenario again, up to N times, in the same session (pytest-rerunfailures): one that fails and then passes "
        "is reported flaky, with each attempt's seed and log, and its profile level is partial, never success",
    )
    group.addoption("--timeout-override", "--rescon-timeout", dest="rescon_timeouts", action="append", default=[], metavar="NAME=SECONDS", help="override one named timeout (repeatable)")


def _option_or_none(config: pytest.Config, name: str) -> Any:
    """An option another plugin (pytest-kind) defines, or None when that plugin is not installed."""
    try:
        return config.getoption(name)
    except ValueError:
        return None


#: pytest-kind's entry-point name; it defines --kubeconfig and --keep-cluster too.
PYTEST_KIND = "pytest-kind"


def _pytest_kind_will_load(pluginmanager: pytest.PytestPluginManager) -> bool:
    """True when pytest-kind is installed, not disabled (`-p no:pytest-kind`) and not registered yet.

    Whichever plugin registers first defines the shared options; pytest-kind
    cannot share them, so when it is still to come we leave them to it.
    """
    import importlib.util

    if pluginmanager.has_plugin(PYTEST_KIND) or pluginmanager.is_blocked(PYTEST_KIND):
        return False
    return importlib.util.find_spec("pytest_kind") is not None


def _add_shared(group: Any, name: str, kind_will_define: bool, **kwargs: Any) -> None:
    if kind_will_define:
        return
    try:
        group.addoption(name, **kwargs)
    except ValueError:
        pass  # already defined by pytest-kind, with the same meaning


@dataclass
class SuiteConfig:
    """SuiteConfig is the command line, validated once."""

    scheduler_name: str
    scheduler_mode: str
    scheduler_cmd: str | None
    cluster: str
    kubeconfig: str | None
    context: str | None
    coschedule: str
    supported: frozenset[Feature]
    report_output: Path | None
    implementation: dict[str, Any]
    keep_cluster: bool
    timeouts: TimeoutConfig
    resize_floor_cpu: str = "10m"
    kind_bin: str | None = None
    scheduler_pod_selector: str | None = None
    scheduler_config_template: str | None = None
    scheduler_replica_cmd: str | None = None
    contract_keep_going: bool = False

    @classmethod
    def from_pytest(cls, config: pytest.Config) -> SuiteConfig:
        option = config.getoption
        mode = option("--scheduler")
        overrides = dict(parse_override(text) for text in option("rescon_timeouts"))
        supported = resolve_supported(
            declared=parse_features(option("--supported-features")),
            exempt=parse_features(option("--exempt-features")),
            also=parse_features(option("--with-features")),
            all_features=bool(option("--all-features")),
            default=default_features(mode),
        )
        report = option("--report-output")
        from harness.suite.lease_names import check_lease_names
        from harness.suite.workers import scheduler_name_for

        scheduler_name = scheduler_name_for(option("--scheduler-name"), mode=mode, worker=worker_id(config))
        if mode in LEASE_MODES:
            check_lease_names(scheduler_name)
        return cls(
            scheduler_name=scheduler_name,
            scheduler_mode=mode,
            scheduler_cmd=option("--scheduler-cmd"),
            cluster=option("--cluster"),
            kubeconfig=option("--kubeconfig"),
            context=option("--context"),
            coschedule=option("--coschedule"),
            supported=supported,
            report_output=Path(report) if report else None,
            implementation={
                "organization": option("--implementation-organization") or DEFAULT_ORGANIZATION.get(mode, "unspecified"),
                "project": option("--implementation-project") or DEFAULT_PROJECT.get(mode, option("--scheduler-name")),
                "url": option("--implementation-url"),
                "version": option("--implementation-version"),
                "contact": [c for c in (option("--implementation-contact") or "").split(",") if c],
            },
            keep_cluster=bool(option("--keep-cluster")),
            timeouts=DEFAULT_TIMEOUTS.with_overrides(overrides),
            resize_floor_cpu=option("--resize-floor-cpu"),
            kind_bin=_option_or_none(config, "kind_bin"),
            scheduler_pod_selector=option("--scheduler-pod-selector"),
            scheduler_config_template=option("--scheduler-config-template"),
            scheduler_replica_cmd=option("--scheduler-replica-cmd"),
            contract_keep_going=bool(option("--contract-keep-going")),
        )


@dataclass
class Outcome:
    """Outcome is how one attempt of a scenario ended (a scenario runs once, or more with --rerun-failures)."""

    scenario: Scenario
    outcome: str
    duration: float
    message: str = ""
    #: The report's name for this run: the scenario's, with pytest-repeat's "[k-N]" when run N times.
    name: str = ""
    #: What tells this attempt apart from another (harness.report.attempts): its seed, if it drew from one, its namespace, its log's tail.
    seed: int | None = None
    namespace: str = ""
    log: str = ""

    def to_wire(self) -> dict[str, Any]:
        """to_wire() is this outcome as plain data, for a report's user_properties (xdist sends them to its controller)."""
        s = self.scenario
        return {
            "scenario": {"name": s.name, "description": s.description, "features": [f.value for f in s.features]},
            "outcome": self.outcome, "duration": self.duration, "message": self.message, "name": self.name or s.name,
            "seed": self.seed, "namespace": self.namespace, "log": self.log,
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Outcome:
        s = data["scenario"]
        scenario = Scenario(name=s["name"], description=s["description"], features=tuple(Feature(f) for f in s["features"]), fixtures=())
        return cls(
            scenario, data["outcome"], data["duration"], data["message"], data["name"],
            seed=data.get("seed"), namespace=str(data.get("namespace") or ""), log=str(data.get("log") or ""),
        )


#: How a HarnessError's detail (a scheduler's log tail) is titled in reports, and how much of it the message keeps.
DETAIL_SECTION = "(the scheduler's log tail)"
DETAIL_LINES = 10
#: The user_properties keys a scenario's report carries its outcome, the cluster's versions and its latencies under.
OUTCOME_PROPERTY = "rescon_outcome"
VERSIONS_PROPERTY = "rescon_versions"
LATENCIES_PROPERTY = "rescon_latencies"
#: pytest-rerunfailures' outcome of an attempt that failed and is run again, and its name as a plugin.
RERUN = "rerun"
RERUNFAILURES = "rerunfailures"
#: The item's attribute that counts the captured sections of its attempts before this one.
SECTIONS_BEFORE = "rescon_sections_before"
#: The session's SuiteState, for hooks that get no config (pytest_runtest_logreport).
_STATE: dict[str, SuiteState] = {}


@dataclass
class SuiteState:
    config: SuiteConfig
    #: Each scenario's last attempt, by its report name.
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    versions: dict[str, str] = field(default_factory=dict)
    #: The attempts before the last of each scenario run again (--rerun-failures), in order, by report name.
    earlier_attempts: dict[str, list[Outcome]] = field(default_factory=dict)
    #: Every attempt's latencies, as its report brought them (every xdist worker's, in the controller).
    latencies: list[Latencies] = field(default_factory=list)


_STATE_KEY = pytest.StashKey[SuiteState]()


def scenario_of(item: pytest.Item) -> Scenario | None:
    module = getattr(item, "module", None)
    found = getattr(module, "SCENARIO", None)
    return found if isinstance(found, Scenario) else None


def outcome_key(item: pytest.Item, scenario: Scenario) -> str:
    """outcome_key() is "colocation", or "colocation[3-10]" for the third of ten runs under pytest-repeat's --count."""
    callspec = getattr(item, "callspec", None)
    return f"{scenario.name}[{callspec.id}]" if callspec is not None else scenario.name


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "conformance: a conformance scenario (has SCENARIO metadata)")
    try:
        config.stash[_STATE_KEY] = SuiteState(SuiteConfig.from_pytest(config))
    except HarnessError as err:
        raise pytest.UsageError(str(err)) from err
    _STATE["state"] = config.stash[_STATE_KEY]
    _ask_for_reruns(config)


def _ask_for_reruns(config: pytest.Config) -> None:
    """--rerun-failures N is pytest-rerunfailures' --reruns N, read by it when each test runs (so xdist's workers get it too)."""
    reruns = int(config.getoption("rerun_failures") or 0)
    if reruns < 0:
        raise pytest.UsageError(f"--rerun-failures {reruns}: give a number of reruns, 0 or more")
    if reruns == 0:
        return
    if not config.pluginmanager.hasplugin(RERUNFAILURES):
        raise pytest.UsageError("--rerun-failures needs pytest-rerunfailures (a dependency of the suite): install it, or drop -p no:rerunfailures")
    given = _option_or_none(config, "reruns")
    if given is not None and given != reruns:
        raise pytest.UsageError(f"--rerun-failures {reruns} and --reruns {given} disagree: give one of them")
    config.option.reruns = reruns


#: The xdist controller's hold on the cluster (harness.suite.session.ControllerCluster).
_CONTROLLER_KEY = pytest.StashKey[Any]()
#: A plain (no `-n`) session's hold on the local cluster's lock, taken before its first test.
_SESSION_LOCK_KEY = pytest.StashKey[contextlib.ExitStack]()


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """With `-n N`, the controller locks and brings up the cluster before xdist starts its workers."""
    from harness.suite.workers import is_controller, runs_scenarios

    config = session.config
    if not is_controller(config) or config.option.collectonly or not runs_scenarios(config.args, Path(config.invocation_params.dir)):
        return
    from harness.suite.session import ControllerCluster

    # Scenarios are handed out one at a time, in the workers' order (longest first): xdist's first batches would
    # otherwise give one worker several of the longest in a row.
    if config.option.maxschedchunk is None:
        config.option.maxschedchunk = 1
    try:
        config.stash[_CONTROLLER_KEY] = ControllerCluster(config.stash[_STATE_KEY].config, config.stash[_STATE_KEY])
    except HarnessError as err:
        raise pytest.UsageError(str(err)) from err


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Without `-n`, a session whose tests use the cluster takes its lock here, before the first test starts.

    Taken in the `cluster` fixture instead, the wait for another session's run
    would count against the first scenario's pytest-timeout.
    """
    from harness.suite.session import hold_cluster
    from harness.suite.workers import is_controller

    config = session.config
    # --collect-only runs nothing: it never waits for another session's hold on the cluster.
    if worker_id(config) is not None or is_controller(config) or config.option.collectonly:
        return
    if not any("cluster" in getattr(item, "fixturenames", ()) and item.get_closest_marker("skip") is None for item in session.items):
        return
    lock = contextlib.ExitStack()
    try:
        lock.enter_context(hold_cluster(config.stash[_STATE_KEY].config))
    except HarnessError as err:
        raise pytest.UsageError(str(err)) from err
    config.stash[_SESSION_LOCK_KEY] = lock


def pytest_unconfigure(config: pytest.Config) -> None:
    controller = config.stash.get(_CONTROLLER_KEY, None)
    if controller is not None:
        controller.close()
    lock = config.stash.get(_SESSION_LOCK_KEY, None)
    if lock is not None:
        lock.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[_STATE_KEY]
    for item in items:
        scenario = scenario_of(item)
        if scenario is None:
            continue
        item.add_marker(pytest.mark.conformance)
        missing = [f for f in scenario.features if f not in state.config.supported]
        if missing:
            item.add_marker(pytest.mark.skip(reason=skip_reason(missing)))
            continue
        # What the provider's name alone rules out is known now: skipped here, such a scenario goes first rather than
        # end a worker's turn at once near the session's end (_longest_first).
        unfit = provider_rules_out(scenario, provider=state.config.cluster)
        if unfit is not None:
            item.add_marker(pytest.mark.skip(reason=unfit))
    if worker_id(config) is not None:
        items[:] = slots_last(_longest_first(items, shared_nodes=state.config.cluster in SLOT_NODE_PROVIDERS), slot_of=_slot_of)


#: The providers whose pools are claimed from shared slot nodes (harness.cluster.slot_pools), not made per scenario.
SLOT_NODE_PROVIDERS = ("kind", "existing")


def _longest_first(items: list[pytest.Item], *, shared_nodes: bool = False) -> list[pytest.Item]:
    """_longest_first() orders a worker's scenarios by the seconds beside them (harness.suite.scenario_seconds); other tests keep their place after them.

    With `shared_nodes` the scenario with the largest pool goes first of all, while every slot node is free (largest_pool_first).
    """
    seconds: dict[str, float] = {}
    for directory in sorted({item.path.parent for item in items if scenario_of(item) is not None}):
        try:
            seconds.update(scenario_seconds.read(directory))
        except HarnessError as err:
            raise pytest.UsageError(str(err)) from err
    scenarios = [item for item in items if scenario_of(item) is not None]
    ordered = scenario_seconds.longest_first(scenarios, key_of=lambda item: scenario_seconds.module_key(item.path.stem), seconds=seconds)
    if shared_nodes:
        ordered = largest_pool_first(ordered, pool_count_of=_pool_count)
    # Skipped ones first: done at once, each hands its worker the next test. Near the end that next test would be
    # the window's, queued behind another of the window on the same worker, which then runs them one after the other.
    ordered.sort(key=lambda item: item.get_closest_marker("skip") is None)
    return ordered + [item for item in items if scenario_of(item) is None]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Each test a worker starts is noted before its fixtures: the window's scenarios wait for those before them."""
    if worker_id(item.config) is not None:
        note_started(item.nodeid)


def _pool_count(item: pytest.Item) -> int:
    """_pool_count() is how many nodes the item's scenario claims; a skipped one claims none."""
    scenario = scenario_of(item)
    return scenario.pool.count if scenario is not None and item.get_closest_marker("skip") is None else 0


def _slot_of(item: pytest.Item) -> Slot:
    """_slot_of() is whom the item may run beside (ScenarioSlots); a skipped scenario or another test keeps its place among the shared."""
    scenario = scenario_of(item)
    return slot_of(scenario) if scenario is not None and item.get_closest_marker("skip") is None else Slot.SHARED


def skip_reason(missing: list[Feature]) -> str:
    """skip_reason() says why a scenario is not run: an opt-in feature not asked for, or one the implementation does not support."""
    opt_in = [f.value for f in missing if f in OPT_IN_FEATURES]
    if opt_in and len(opt_in) == len(missing):
        return f"opt-in feature {', '.join(opt_in)} not requested: name it in --with-features or --supported-features, or pass --all-features"
    return unsupported_message([f.value for f in missing])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """After a scenario's body, the contract monitor has the last word: its first violation fails the scenario.

    A body that failed on its own is reported with the violation that came
    first, when there is one, since that is the cause a reader needs.
    """
    run = getattr(item, "funcargs", {}).get("run")
    try:
        result = yield
    except BaseException as err:
        monitor = getattr(run, "monitor", None)
        broken = monitor.describe_violations() if monitor is not None else None
        if monitor is not None and broken is not None and broken not in str(err):
            from harness.monitor.watcher import ContractBroken

            # The body's notes (a generative draw's seed and replay command) stay with the message.
            notes = "".join(f"\n{note}" for note in getattr(err, "__notes__", ()))
            raise ContractBroken(f"{broken}; then the scenario failed: {err}{notes}", monitor.describe_arithmetic()) from err
        raise
    monitor = getattr(run, "monitor", None)
    if monitor is not None:
        monitor.stop()
        monitor.raise_if_violated(final=True)
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    scenario = scenario_of(item)
    if scenario is None:
        return
    state = item.config.stash[_STATE_KEY]
    key = outcome_key(item, scenario)
    if report.when == "setup":
        item.rescon_failed = False  # type: ignore[attr-defined]  # each attempt starts clean (--rerun-failures)
    # pytest keeps an item's captured sections across attempts: this attempt's come after those of the attempts before.
    sections = report.sections[getattr(item, SECTIONS_BEFORE, 0):]
    if report.when == "teardown":
        setattr(item, SECTIONS_BEFORE, len(report.sections))
    run = getattr(item, "funcargs", {}).get("run")
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        message = _failure_message(report) if report.failed else (report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple) else "")
        error = call.excinfo.value if report.failed and call.excinfo is not None else None
        detail = getattr(error, "detail", "")
        title, lines = getattr(error, "detail_title", DETAIL_SECTION), getattr(error, "detail_lines", DETAIL_LINES)
        longrepr = report.longrepr
        if detail and isinstance(longrepr, ExceptionRepr):
            # A section of the failure itself: the terminal prints it under the traceback, JUnit's
            # <error>/<failure> text and Allure's trace include it; the report's message carries its lines too.
            longrepr.addsection(title, detail)
        message = message_with_detail(message, title, detail, lines=lines)
        verdict = verdict_of(report, call)
        outcome_of_run = Outcome(
            scenario, verdict, report.duration, message, key,
            seed=take_seed(item), namespace=str(getattr(run, "namespace", "") or ""), log=log_tail(sections),
        )
        monitor = getattr(run, "monitor", None)
        if report.when == "call" and monitor is not None:
            report.user_properties.append((LATENCIES_PROPERTY, monitor.latencies().to_wire()))
        earlier = state.earlier_attempts.get(key)
        if earlier:
            from harness.suite.reporting import attach_attempts

            attach_attempts([*earlier, outcome_of_run])
        if report.failed:
            item.rescon_failed = True  # type: ignore[attr-defined]
        if verdict == "error" and report.when == "call":
            setattr(report, SETUP_ERROR_IN_CALL, True)
    elif report.when == "teardown" and report.failed:
        outcome_of_run = Outcome(scenario, "failed", 0.0, _failure_message(report), key)
    else:
        return
    # Carried on the report, so the controller of xdist workers builds the ConformanceReport from them too.
    report.user_properties.append((OUTCOME_PROPERTY, outcome_of_run.to_wire()))
    if state.versions:
        report.user_properties.append((VERSIONS_PROPERTY, dict(state.versions)))


def _file_outcome(report: pytest.TestReport) -> None:
    """_file_outcome() files a scenario's outcome from its report, in a plain session and in the xdist controller alike."""
    state = _STATE.get("state")
    if state is None:
        return
    for name, value in report.user_properties:
        if name == VERSIONS_PROPERTY and isinstance(value, dict):
            state.versions.update(value)
        if name == LATENCIES_PROPERTY and isinstance(value, dict):
            from harness.monitor.latencies import Latencies

            state.latencies.append(Latencies.from_wire(value))
        if name != OUTCOME_PROPERTY or not isinstance(value, dict):
            continue
        arrived = Outcome.from_wire(value)
        if report.outcome == RERUN:
            # pytest-rerunfailures runs the scenario again: this attempt is an earlier one, the next report decides.
            state.earlier_attempts.setdefault(arrived.name, []).append(arrived)
            continue
        previous = state.outcomes.get(arrived.name)
        if report.when == "teardown":
            # A failed teardown fails a scenario that had passed; it says nothing new about one that had failed.
            if previous is not None and previous.outcome == "passed":
                state.outcomes[arrived.name] = Outcome(previous.scenario, "failed", previous.duration, arrived.message, arrived.name)
            continue
        state.outcomes[arrived.name] = arrived


#: Set on a call-phase report whose verdict is "error" (a setup error met in the scenario's body).
#: A plain attribute, so it travels with the report to pytest-xdist's controller.
SETUP_ERROR_IN_CALL = "rescon_setup_error_in_call"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> Iterator[None]:
    """A setup error met in a scenario's body is reported as an error, as one met in its fixtures is.

    pytest decides error or failure by the report's phase alone: a failed
    report whose `when` is "setup" or "teardown" is an error (the terminal's
    "E", JUnit's `<error>`), a failed "call" is a failure (`<failure>`). A
    scheduler that exited at launch (SchedulerFailedToStart) or a fixture that
    does not render is no verdict on the scheduler, wherever it is met. So
    while the other plugins (terminal, junitxml, xdist's worker) read such a
    report, its phase reads "setup"; afterwards it is "call" again, so the
    error summary still says where it happened ("ERROR at call of ...").
    """
    _file_outcome(report)
    if not getattr(report, SETUP_ERROR_IN_CALL, False):
        return (yield)
    report.when = "setup"
    try:
        return (yield)
    finally:
        report.when = "call"


def verdict_of(report: pytest.TestReport, call: pytest.CallInfo[None]) -> str:
    """verdict_of() is passed, failed, skipped, or error: a failure that says nothing about the scheduler.

    Setup failures are errors (the cluster, the pool, a scheduler that never
    started), and so is a harness error in the body (a fixture that does not
    render, an API the suite cannot use). A timeout, a broken hold, an
    assertion, the monitor's violation and a scheduler that died while being
    judged are verdicts.
    """
    if not report.failed:
        return report.outcome
    if report.when == "setup":
        return "error"
    from harness.suite.scheduler_under_test import SchedulerDied
    from harness.waits import Broken, WaitTimeout

    error = call.excinfo.value if call.excinfo is not None else None
    if isinstance(error, HarnessError) and not isinstance(error, (WaitTimeout, Broken, SchedulerDied)):
        return "error"
    return "failed"


def message_with_detail(message: str, title: str, detail: str, *, lines: int | None) -> str:
    """message_with_detail() is a failure's message with its detail under its title: the last `lines` of it, every line for None.

    Example: message_with_detail("died", "(log)", "a\nb\nc", lines=2) == "died\n(log):\nb\nc"; no detail leaves the message as it is.
    """
    if not detail:
        return message
    kept = detail.splitlines() if lines is None else detail.splitlines()[-lines:]
    return f"{message}\n{title}:\n" + "\n".join(kept)


def _failure_message(report: pytest.TestReport) -> str:
    """The assertion or error line (pytest's "E" line), not the source listing around it."""
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    return str(message) if message else str(report.longrepr)[-2000:]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:

    state = session.config.stash.get(_STATE_KEY, None)
    if state is None or not state.outcomes or worker_id(session.config) is not None:
        return
    from harness.suite.reporting import write_allure_files, write_conformance_report

    lines = write_conformance_report(state, wall_time=time.monotonic() - state.started)
    alluredir = _option_or_none(session.config, "allure_report_dir")
    if alluredir:
        write_allure_files(state, Path(alluredir))
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.write_sep("=", "reservation conformance")
        for line in lines:
            terminal.write_line(line)


# --- fixtures ---


@pytest.fixture(scope="session")
def suite_config(request: pytest.FixtureRequest) -> SuiteConfig:
    return request.config.stash[_STATE_KEY].config


@pytest.fixture(scope="session")
def suite_state(request: pytest.FixtureRequest) -> SuiteState:
    return request.config.stash[_STATE_KEY]


@pytest.fixture(scope="session")
def cluster(request: pytest.FixtureRequest, suite_config: SuiteConfig) -> Iterator[Any]:
    """cluster is the provider, brought up once per session (and down at the end unless --keep-cluster).

    An xdist worker leaves a local cluster up: its controller brought it up and
    takes it down. On an existing cluster `down` only removes what this
    session made, so each worker cleans up after itself.
    """
    from harness.suite.session import hold_cluster, make_provider

    with hold_cluster(suite_config):
        provider = make_provider(suite_config)
        try:
            yield provider
        finally:
            if not suite_config.keep_cluster and (worker_id(request.config) is None or suite_config.cluster == "existing"):
                provider.down()


@pytest.fixture(scope="session")
def kube(request: pytest.FixtureRequest, cluster: Any, suite_config: SuiteConfig, suite_state: SuiteState) -> Iterator[Any]:
    from harness.suite.session import prepare_cluster

    # An xdist worker attaches to the cluster its controller brought up (local, kind: no second bring-up).
    client = cluster.up() if worker_id(request.config) is None else cluster.attach()
    prepare_cluster(client, suite_config, suite_state)
    yield client
    client.close()


@pytest.fixture(scope="session")
def scheduler_under_test(cluster: Any, kube: Any, suite_config: SuiteConfig) -> Iterator[Any]:
    from harness.suite.session import start_scheduler

    scheduler = start_scheduler(cluster, kube, suite_config)
    try:
        yield scheduler
    finally:
        scheduler.stop()


@pytest.fixture(scope="session")
def retired_pools(cluster: Any, kube: Any, suite_config: SuiteConfig) -> Iterator[Any]:
    """retired_pools holds the session's scenario pools until their provisioned volumes are gone (harness.suite.retired_pools)."""
    from harness.suite.session import retired_pools as make_retired_pools

    retired = make_retired_pools(cluster, kube, suite_config)
    try:
        yield retired
    finally:
        retired.drain()


@pytest.fixture
def run(
    request: pytest.FixtureRequest, cluster: Any, kube: Any, scheduler_under_test: Any, suite_config: SuiteConfig, retired_pools: Any
) -> Iterator[Any]:
    """run is the scenario's ScenarioRun; everything it created is deleted afterwards."""
    from harness.suite.session import scenario_run

    scenario = scenario_of(request.node)
    if scenario is None:
        raise HarnessError(f"{request.node.nodeid} uses the `run` fixture but its module defines no SCENARIO")
    after = earlier_nodeids(request.session.items, slot_of(scenario), slot_of=_slot_of, nodeid_of=lambda item: item.nodeid)
    with scenario_run(request, scenario, cluster, kube, scheduler_under_test, suite_config, retired_pools, after=after) as scenario_run_:
        yield scenario_run_

