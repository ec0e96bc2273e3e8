"""The two schedulers under benchmark, each started fresh for every run and serving its own schedulerName.

* reference: `python -m reference_scheduler.main --qps Q --burst B` (a
  token bucket with client-go's semantics limits its requests, as
  kube-scheduler's clientConnection.qps/burst limit its own);
* kube-scheduler: the toolchain's cached binary, default profile, with
  `clientConnection.qps/burst` in its KubeSchedulerConfiguration, started the
  way harness/suite/scheduler_under_test.py starts it.

* command: a user's scheduler, `BENCH_SCHEDULER_CMD`, with the placeholders
  of the suite's `--scheduler-cmd` ({kubeconfig}, {scheduler_name}, {config}
  from `BENCH_SCHEDULER_CONFIG_TEMPLATE`), expanded by the suite's own code
  (harness.suite.scheduler_under_test). Its environment has
  RESCON_BENCH_QPS and RESCON_BENCH_BURST, the row's client rate setting, for
  a command that wants to honour it (through `sh -c '... --qps $RESCON_BENCH_QPS'`,
  say); otherwise its rows at both settings are the same program.

Every kind gets the same kubeconfig: the benchmark's scheduler identity
(bench/api_writes.py), so the API server counts each one's requests alike.

With `profile` set, the reference runs under cProfile (bench/profiled.py);
its scheduling loop is the main thread, which is what cProfile sees.
"""

from __future__ import annotations

import compileall
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.cluster.processes import ManagedProcess, free_port, tail
from harness.cluster.toolchain import Toolchain
from harness.suite.scheduler_under_test import SchedulerUnderTest, kube_scheduler_config

KINDS = ("reference", "kube-scheduler", "reference-baseline", "command")
#: The kinds that run this project's reference scheduler (from this checkout or BENCH_BASELINE_TREE).
REFERENCE_KINDS = ("reference", "reference-baseline")

#: The user's scheduler: its command (placeholders as the suite's --scheduler-cmd), its config template, its name in the report.
COMMAND_ENV = "BENCH_SCHEDULER_CMD"
CONFIG_TEMPLATE_ENV = "BENCH_SCHEDULER_CONFIG_TEMPLATE"
LABEL_ENV = "BENCH_SCHEDULER_LABEL"
#: What a user's command finds in its environment: the row's client rate setting.
QPS_ENV, BURST_ENV = "RESCON_BENCH_QPS", "RESCON_BENCH_BURST"

#: `reference-baseline` runs the reference from another checkout (BENCH_BASELINE_TREE, e.g. a
#: `git worktree` of the commit before an optimisation), serving bench-reference's name.
BASELINE_TREE_ENV = "BENCH_BASELINE_TREE"


@dataclass(frozen=True)
class Qps:
    """Qps is one client rate setting, the same for both schedulers."""

    name: str
    qps: float
    burst: int


DEFAULT_QPS = Qps("default", 50, 100)
UNTHROTTLED = Qps("unthrottled", 10000, 10000)


def compile_bytecode(package: Path) -> bool:
    """compile_bytecode(tree / 'reference_scheduler') writes the package's bytecode (`__pycache__`), as installing it does.

    The bench counts the scheduler's whole CPU, its start included. Without bytecode (a fresh
    checkout, or PYTHONDONTWRITEBYTECODE set, which also keeps it from being written) the reference
    compiles its 60 modules from source at every start: about 0.1 s, 0.3 ms per pod of a 300-pod
    backlog, that the image (deploy/Dockerfile: pip compiles at install) never pays, as
    kube-scheduler, a built binary, never does. Compiled here, in the bench's process; a no-op once current.
    """
    return compileall.compile_dir(package, quiet=1)


def bench_scheduler_name(kind: str) -> str:
    """bench_scheduler_name('reference') == 'bench-reference': never a name the conformance suite uses."""
    return f"bench-{kind}"


@dataclass
class BenchScheduler:
    kind: str
    qps: Qps
    kubeconfig: Path
    workdir: Path
    profile: Path | None = None
    #: command only: BENCH_SCHEDULER_CMD and BENCH_SCHEDULER_CONFIG_TEMPLATE.
    command_template: str | None = None
    config_template: Path | None = None

    @property
    def name(self) -> str:
        return bench_scheduler_name("reference" if self.kind == "reference-baseline" else self.kind)

    @property
    def process(self) -> ManagedProcess:
        return ManagedProcess.in_dir(f"bench-{self.kind}", self.workdir)

    def under_test(self) -> SchedulerUnderTest:
        """under_test() is the suite's own launcher for a command scheduler: it expands the placeholders and renders the config."""
        return SchedulerUnderTest(
            mode="command", scheduler_name=self.name, kubeconfig=self.kubeconfig, workdir=self.workdir,
            command_template=self.command_template, config_template=self.config_template,
        )

    def argv(self) -> list[str]:
        if self.kind == "command":
            argv = self.under_test().argv()
            # As the suite resolves it: a program on PATH, or a path from the directory the benchmark runs in.
            found = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
            if found is None:
                raise ValueError(f"{argv[0]!r} from {COMMAND_ENV} is not on PATH and not a path from {os.getcwd()}")
            return [os.path.abspath(found), *argv[1:]]
        if self.kind in REFERENCE_KINDS:
            args = [
                "--kubeconfig", str(self.kubeconfig),
                "--scheduler-name", self.name,
                "--no-leader-elect",
                "--metrics-port", "0",
                "--log-format", "text",
                "--qps", str(self.qps.qps),
                "--burst", str(self.qps.burst),
            ]
            if self.profile is not None:
                return [sys.executable, "-m", "bench.profiled", str(self.profile), "--", *args]
            return [sys.executable, "-m", "reference_scheduler.main", *args]
        if self.kind == "kube-scheduler":
            binary = Toolchain().ensure(["kube-scheduler"])["kube-scheduler"]
            config = kube_scheduler_config(kubeconfig=self.kubeconfig, scheduler_name=self.name)
            config["clientConnection"] = {**config["clientConnection"], "qps": self.qps.qps, "burst": self.qps.burst}  # type: ignore[dict-item]
            path = self.workdir / f"kube-scheduler-{self.name}.yaml"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(yaml.safe_dump(config))
            return [str(binary), "--config", str(path), "--secure-port", str(free_port()), "--bind-address", "127.0.0.1"]
        raise ValueError(f"unknown scheduler {self.kind!r}: use one of {', '.join(KINDS)}")

    def start(self) -> int:
        self.process.stop(grace_seconds=5)
        self.process.log_file.parent.mkdir(parents=True, exist_ok=True)
        self.process.log_file.write_text("")
        repo = Path(__file__).resolve().parent.parent
        tree = Path(os.environ[BASELINE_TREE_ENV]) if self.kind == "reference-baseline" else repo
        # The baseline tree goes first on the path, ahead of this checkout's editable install;
        # bench.profiled still comes from this checkout.
        path = os.pathsep.join(str(p) for p in dict.fromkeys([tree, repo]))
        env = {**os.environ, "PYTHONPATH": f"{path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        if self.kind == "command":
            env = {**os.environ, QPS_ENV: f"{self.qps.qps:g}", BURST_ENV: str(self.qps.burst)}
            return self.process.start(self.argv(), env=env, cwd=self.workdir)
        if self.kind in REFERENCE_KINDS:
            compile_bytecode(tree / "reference_scheduler")
        return self.process.start(self.argv(), env=env, cwd=tree)

    def pid(self) -> int | None:
        return self.process.pid()

    def alive(self) -> bool:
        return self.process.alive()

    def stop(self) -> None:
        # SIGTERM first: the profiled reference writes its profile on a clean stop.
        self.process.stop(grace_seconds=20)

    def log_tail(self, lines: int = 20) -> str:
        return tail(self.process.log_file, lines)
