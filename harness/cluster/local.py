"""The `local` cluster: real control plane and Tekton from pinned Go modules, KWOK-simulated nodes.

kwokctl's binary runtime runs etcd, kube-apiserver, kube-controller-manager,
the stock kube-scheduler (as `default-scheduler`) and the KWOK controller,
and owns their certificates, ports and kubeconfig. The harness adds the
Tekton Pipelines controller as one more process in the same work directory,
so every component's log lands in `<workdir>/logs/`.

The user's ~/.kube/config is never touched: kwokctl is always told
`--kubeconfig ""`, and the cluster's own kubeconfig stays in the work directory.

For tests of the harness itself, `RESCON_BINARY_OVERRIDE_<PROGRAM>` (the program
name upper-cased, `-` as `_`, e.g. `RESCON_BINARY_OVERRIDE_KUBE_APISERVER=/tmp/crash.sh`)
replaces one cached program by another executable. It exists so that a test can
make a component crash at start and check that the error shows its log tail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TextIO

import kubernetes
import yaml

from harness.cluster import namespaces, node_pools, storage, tekton, tekton_resolvers, volumes
from harness.cluster.node_pools import NodePool
from harness.cluster.paths import state_root
from harness.cluster.processes import ManagedProcess, free_port, port_in_use, tail
from harness.cluster.restarts import launch_of, relaunch, revive
from harness.cluster.simulation import HOLD, RUN_FOR, affinity_assistant_policy, affinity_assistant_probe_pod, all_stages
from harness.cluster.toolchain import Toolchain, program_named
from harness.errors import HarnessError
from harness.kube import Kube, api_ready, json_object, present
from harness.timeouts import DEFAULT_TIMEOUTS, TimeoutConfig
from harness.waits import NotYet, wait_for

#: The processes kwokctl starts, by the name of their pid and log files.
KWOKCTL_COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok-controller")
TEKTON_PROCESS = "tekton-controller"
#: The components restart_component() can restart (the Resilience scenarios' faults).
RESTARTABLE = frozenset({"kube-apiserver", "etcd", TEKTON_PROCESS})
#: The components that hold a leader-election Lease in kube-system, and lose it (and exit) when the API is away 10 s.
LEADER_ELECTED = ("kube-controller-manager", "kube-scheduler")

#: The label that marks the probe TaskRun used to see Tekton reconcile.
PROBE_LABEL = tekton.PROBE_LABEL

#: `RESCON_BINARY_OVERRIDE_KUBE_APISERVER=/path` replaces the cached kube-apiserver (see the module doc).
BINARY_OVERRIDE_PREFIX = "RESCON_BINARY_OVERRIDE_"


def override_variable(program: str) -> str:
    """override_variable('kube-apiserver') == 'RESCON_BINARY_OVERRIDE_KUBE_APISERVER'."""
    return BINARY_OVERRIDE_PREFIX + program.upper().replace("-", "_")


def with_binary_overrides(binaries: Mapping[str, Path], environ: Mapping[str, str]) -> dict[str, Path]:
    """with_binary_overrides() swaps in each program named by a RESCON_BINARY_OVERRIDE_* variable.

    An override that is not an executable file fails at once, naming the variable,
    rather than surfacing later as a component that "crashed".
    """
    resolved = dict(binaries)
    for program in binaries:
        value = environ.get(override_variable(program))
        if not value:
            continue
        path = Path(value).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise HarnessError(f"{override_variable(program)}={value} is not an executable file: fix or unset it")
        resolved[program] = path
    return resolved


def kwokctl_error(output: str) -> str:
    """kwokctl_error() is the cause of a failed kwokctl run, in one line, from its JSON log output.

    Example: from `{"level":"ERROR","msg":"Execute exit","err":"cmd wait: .../kube-apiserver
    version: exit status 1\\n..."}` it returns "cmd wait: .../kube-apiserver version: exit status 1".
    """
    errors: list[str] = []
    plain: list[str] = []
    for line in filter(None, (raw.strip() for raw in output.splitlines())):
        try:
            entry = json.loads(line)
        except ValueError:
            plain.append(line)
            continue
        text = str(entry.get("err") or entry.get("msg") or "").strip() if isinstance(entry, dict) else ""
        if text and entry.get("level") == "ERROR":
            errors.append(text.splitlines()[0])
    cause = (errors or plain or ["no output"])[-1]
    return cause[:300]


def require_free_port(port: int, *, in_use: Callable[[int], bool] | None = None) -> None:
    """require_free_port(8080) fails, naming the fix, if something listens where Tekton's probes must."""
    if (in_use or port_in_use)(port):
        raise HarnessError(
            f"port {port} is in use, and Tekton's controller always serves health probes there: "
            "stop what listens on it (another local cluster? 'rescon cluster down --name ...') and retry"
        )


@dataclass
class LocalCluster:
    """LocalCluster is one named local cluster: `up()` builds and starts it, `down()` removes every trace."""

    name: str = "rescon"
    coschedule: str = "disabled"
    kind: str = field(default="local", init=False)
    exclusive_pools: bool = field(default=True, init=False)
    timeouts: TimeoutConfig = DEFAULT_TIMEOUTS
    out: TextIO = field(default=sys.stderr, repr=False)

    @classmethod
    def from_options(cls, *, name: str, coschedule: str, timeouts: TimeoutConfig = DEFAULT_TIMEOUTS) -> LocalCluster:
        tekton.feature_flags(coschedule)  # validates the mode before anything starts
        return cls(name=name, coschedule=coschedule, timeouts=timeouts)

    # --- where things are ---

    @property
    def workdir(self) -> Path:
        return state_root() / "clusters" / self.name

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig.yaml"

    def logs_dir(self) -> Path:
        return self.workdir / "logs"

    @property
    def side_files_dir(self) -> Path:
        """side_files_dir holds what must exist before kwokctl makes the work directory.

        Not `clusters/`: kwokctl scans that directory and warns about every file in it.
        """
        return state_root() / "side-files"

    @property
    def kwokctl_config(self) -> Path:
        return self.side_files_dir / f"{self.name}.kwokctl.yaml"

    @property
    def kwokctl_log(self) -> Path:
        return self.side_files_dir / f"{self.name}.kwokctl.log"

    def _side_files(self) -> list[Path]:
        # The last two are where earlier versions of the harness kept the config and scratch kubeconfig.
        return [
            self.kwokctl_config,
            self.kwokctl_log,
            self.side_files_dir / f"{self.name}.scratch-kubeconfig",
            self.workdir.parent / f"{self.name}.kwokctl.yaml",
            self.workdir.parent / f"{self.name}.scratch-kubeconfig",
        ]

    @property
    def tekton_process(self) -> ManagedProcess:
        return ManagedProcess.in_dir(TEKTON_PROCESS, self.workdir)

    @property
    def provisioner_process(self) -> ManagedProcess:
        return ManagedProcess.in_dir(storage.PROCESS, self.workdir)

    @property
    def resolvers_process(self) -> ManagedProcess:
        return ManagedProcess.in_dir(tekton_resolvers.PROCESS, self.workdir)

    def component_processes(self) -> list[ManagedProcess]:
        named = [ManagedProcess.in_dir(name, self.workdir) for name in KWOKCTL_COMPONENTS]
        return named + [self.provisioner_process, self.tekton_process, self.resolvers_process]

    # --- lifecycle ---

    def attach(self) -> Kube:
        """attach() is an xdist worker's client of the cluster its controller brought up with up(): it only connects."""
        return Kube.connect(self.kubeconfig)

    def up(self, *, with_tekton: bool = True) -> Kube:
        """up() returns a client of a running cluster, creating whatever is missing.

        with_tekton=False brings up only the control plane and KWOK: a second
        local cluster can run that way next to one that runs Tekton, whose
        controller needs port 8080 for itself.
        """
        started = time.monotonic()
        toolchain = Toolchain(out=self.out)
        binaries = with_binary_overrides(toolchain.ensure(), os.environ)
        if with_tekton and not self.tekton_process.alive():
            # Checked before anything starts, so a busy port costs no cluster start-up.
            require_free_port(tekton.KNATIVE_HEALTH_PORT)
        if self.workdir.exists() and not self._control_plane_alive():
            self._say(f"cluster {self.name}: found a stopped cluster in {self.workdir}; removing it first")
            self.down()
        if self.workdir.exists() and self._stages_stale():
            # KWOK reads its Stages once, at creation: a cluster made by an older harness plays an older simulation.
            self._say(f"cluster {self.name}: its simulation ({self.kwokctl_config}) is not this harness's; recreating it")
            self.down()
        if not self.workdir.exists():
            self._create_control_plane(binaries)
        kube = Kube.connect(self.kubeconfig)
        self._wait_api_ready(kube)
        self._install_storage(kube, binaries[storage.PROCESS])
        if with_tekton:
            self._install_tekton(kube, toolchain, binaries[TEKTON_PROCESS])
            self._install_resolvers(kube, toolchain, binaries[tekton_resolvers.PROCESS])
        self._say(f"cluster {self.name}: up in {time.monotonic() - started:.1f}s (logs: {self.logs_dir()})")
        return kube

    def down(self) -> None:
        """down() stops every process of the cluster and removes its work directory; idempotent."""
        self.resolvers_process.stop(grace_seconds=self.timeouts.process_stop)
        self.tekton_process.stop(grace_seconds=self.timeouts.process_stop)
        self.provisioner_process.stop(grace_seconds=self.timeouts.process_stop)
        kwokctl = self._kwokctl_path()
        if self.workdir.exists() and kwokctl is not None:
            # kwokctl delete refuses an empty --kubeconfig; give it a scratch file, never the user's.
            self.side_files_dir.mkdir(parents=True, exist_ok=True)
            scratch = self.side_files_dir / f"{self.name}.scratch-kubeconfig"
            result = self._run_kwokctl(kwokctl, ["delete", "cluster", "--kubeconfig", str(scratch)], timeout=self.timeouts.cluster_delete, check=False)
            if result.returncode != 0:
                self._say(f"cluster {self.name}: kwokctl delete failed ({result.stderr.strip()[-200:]}); stopping processes directly")
        for process in self.component_processes():
            process.stop(grace_seconds=self.timeouts.process_stop)
        shutil.rmtree(self.workdir, ignore_errors=True)
        for path in self._side_files():
            path.unlink(missing_ok=True)

    def status_lines(self) -> list[str]:
        if not self.workdir.exists():
            return [f"cluster {self.name}: not created (run 'rescon cluster up')"]
        lines = [f"cluster {self.name}: {self.workdir}"]
        for process in self.component_processes():
            pid = process.pid()
            state = "running" if process.alive() else "stopped"
            lines.append(f"  {process.name:<24} {state:<8} pid {pid or '-':<8} log {process.log_file}")
        return lines

    def node_lines(self) -> list[str]:
        kube = Kube.connect(self.kubeconfig)
        lines = []
        for node in kube.core.list_node().items:
            meta = present(node.metadata)
            alloc = present(node.status).allocatable or {}
            capacity = present(node.status).capacity or {}
            pool = (meta.labels or {}).get("rescon.dev/pool", "-")
            lines.append(
                f"{meta.name:<32} pool {pool:<16} cpu {alloc.get('cpu', '?'):<8} memory {alloc.get('memory', '?'):<10} pods {alloc.get('pods', '?'):<4} "
                f"(capacity cpu {capacity.get('cpu', '?')} memory {capacity.get('memory', '?')})"
            )
        return lines or ["no nodes (scenarios add their own pools)"]

    # --- faults: one component restarted ---

    def restartable_components(self) -> frozenset[str]:
        """restartable_components() names what restart_component() can restart here: kube-apiserver, etcd, tekton-controller."""
        return RESTARTABLE

    def restart_component(self, kube: Kube, name: str, *, while_down: Callable[[], None] | None = None) -> float:
        """restart_component(kube, 'kube-apiserver') stops one process (SIGTERM, as a rolling restart does), starts it again, and waits until the cluster serves.

        It returns the seconds from the stop to the cluster serving again.
        `while_down`, if given, runs while the process is stopped (a scenario's
        action in the outage; its own waits bound it). Every wait here is
        bounded by `component_restart`. The process is started again whatever
        happens after its stop (finally), and so is any other component that
        died meanwhile (a controller that lost its lease while the API was
        away), so the shared cluster is never left short of one.
        """
        if name not in RESTARTABLE:
            raise HarnessError(f"restart_component: cannot restart {name!r}; use one of {', '.join(sorted(RESTARTABLE))}")
        processes = {p.name: p for p in self.component_processes()}
        launches = {n: launch_of(p) for n, p in processes.items() if p.alive()}
        if name not in launches:
            raise HarnessError(f"{name} of cluster {self.name} is not running, so it cannot be restarted: read {processes[name].log_file}")
        started = time.monotonic()
        try:
            try:
                processes[name].stop(grace_seconds=self.timeouts.process_stop)
                if while_down is not None:
                    while_down()
            finally:
                if not processes[name].alive():
                    relaunch(processes[name], launches[name])
            self._wait_serving(kube, name, since=time.time())
        finally:
            revived = revive(launches, processes)
            if revived:
                self._say(f"cluster {self.name}: started {', '.join(revived)} again after the restart of {name}")
        if revived:
            self._wait_serving(kube, name, since=time.time())
        seconds = time.monotonic() - started
        self._say(f"cluster {self.name}: {name} restarted; the cluster served again {seconds:.1f}s after the stop")
        return seconds

    def _wait_serving(self, kube: Kube, name: str, *, since: float) -> None:
        """_wait_serving() returns once the API is ready, the leader-elected controllers hold their leases again, and, after a restart of Tekton, Tekton reconciles."""
        processes = {p.name: p for p in self.component_processes()}

        def ready() -> None:
            api_ready(kube)

        wait_for(ready, what=f"the API server of cluster {self.name} after the restart of {name}", timeout="component_restart",
                 timeouts=self.timeouts, hint=f"read {self.logs_dir()}/{name}.log")
        coordination = kubernetes.client.CoordinationV1Api(kube.api)

        def renewed() -> None:
            for component in LEADER_ELECTED:
                if not processes[component].alive():
                    continue  # revive() starts it again; a fresh process takes the lease itself
                try:
                    lease = coordination.read_namespaced_lease(component, "kube-system")
                except Exception as err:  # transport errors right after a restart: try again
                    raise NotYet(f"reading the {component} lease: {err.__class__.__name__}") from err
                renew = lease.spec.renew_time if lease.spec is not None else None
                if renew is None or renew.timestamp() < since:
                    raise NotYet(f"{component} has not renewed its lease since the API came back (last {renew})")

        wait_for(renewed, what=f"the leader-elected controllers of cluster {self.name} to renew their leases", timeout="component_restart",
                 timeouts=self.timeouts)
        # Tekton's informers back off after failed watches (client-go: up to 30 s, jittered to 60 s), so after any
        # restart the cluster serves only once Tekton sees new TaskRuns and PipelineRuns again.
        self._wait_tekton_reconciles(kube)
        self._wait_tekton_sees_pipelineruns(kube)

    def _wait_tekton_sees_pipelineruns(self, kube: Kube) -> None:
        """_wait_tekton_sees_pipelineruns() creates a PipelineRun cancelled from the start and waits for Tekton to give it a condition (no TaskRun is made)."""
        probe = {
            "apiVersion": "tekton.dev/v1",
            "kind": "PipelineRun",
            "metadata": {"generateName": "rescon-readiness-", "namespace": tekton.NAMESPACE, "labels": {PROBE_LABEL: "true"}},
            "spec": {
                "status": "Cancelled",
                "pipelineSpec": {"tasks": [{"name": "noop", "taskSpec": {"steps": [{"name": "noop", "image": "rescon.invalid/noop", "command": ["true"]}]}}]},
            },
        }
        created: list[str] = []

        def reconciled() -> None:
            self._fail_if_crashed((TEKTON_PROCESS,))
            if not created:
                made = json_object(kube.custom.create_namespaced_custom_object("tekton.dev", "v1", tekton.NAMESPACE, "pipelineruns", probe))
                created.append(str(made["metadata"]["name"]))
            obj = json_object(kube.custom.get_namespaced_custom_object("tekton.dev", "v1", tekton.NAMESPACE, "pipelineruns", created[0]))
            if not (obj.get("status") or {}).get("conditions"):
                raise NotYet(f"PipelineRun {tekton.NAMESPACE}/{created[0]} has no condition yet")

        try:
            wait_for(reconciled, what="Tekton to reconcile a probe PipelineRun", timeout="component_restart", timeouts=self.timeouts,
                     hint=f"read {self.tekton_process.log_file}")
        finally:
            kube.custom.delete_collection_namespaced_custom_object("tekton.dev", "v1", tekton.NAMESPACE, "pipelineruns", label_selector=PROBE_LABEL)

    # --- node pools: KWOK nodes made to measure ---

    def add_node_pool(
        self,
        kube: Kube,
        name: str,
        *,
        count: int,
        cpu: str = "4",
        memory: str = "8Gi",
        pods: int = 110,
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, Any]] = (),
    ) -> NodePool:
        return node_pools.add_node_pool(
            kube, name, count=count, cpu=cpu, memory=memory, pods=pods, labels=labels, taints=taints, timeouts=self.timeouts
        )

    def remove_node_pool(self, kube: Kube, pool: NodePool) -> None:
        node_pools.remove_node_pool(kube, pool)

    # --- test namespaces: made for one scenario, deleted with their volumes ---

    def create_test_namespace(self, kube: Kube, name: str) -> str:
        return namespaces.create_test_namespace(kube, name, timeouts=self.timeouts)

    def delete_test_namespace(self, kube: Kube, name: str) -> None:
        namespaces.delete_test_namespace(kube, name, timeouts=self.timeouts, wait=False)
        volumes.delete_test_volumes(kube, name)

    # --- steps of up() ---

    def _stages_stale(self) -> bool:
        """_stages_stale() is True when the running cluster was made with other KWOK Stages than this harness's."""
        return not self.kwokctl_config.exists() or self.kwokctl_config.read_text() != _stages_text()

    def _create_control_plane(self, binaries: dict[str, Path]) -> None:
        self.side_files_dir.mkdir(parents=True, exist_ok=True)
        self.kwokctl_config.write_text(_stages_text())
        args = [
            "create", "cluster",
            "--runtime", "binary",
            "--kubeconfig", "",
            "-c", str(self.kwokctl_config),
            "--etcd-binary", str(binaries["etcd"]),
            "--kube-apiserver-binary", str(binaries["kube-apiserver"]),
            "--kube-controller-manager-binary", str(binaries["kube-controller-manager"]),
            "--kube-scheduler-binary", str(binaries["kube-scheduler"]),
            "--kwok-controller-binary", str(binaries["kwok"]),
            "--wait", f"{int(self.timeouts.api_ready)}s",
        ]
        self._say(f"cluster {self.name}: starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok")
        returncode = self._run_kwokctl_create(binaries["kwokctl"], args)
        if returncode != 0:
            output = self.kwokctl_log.read_text(errors="replace") if self.kwokctl_log.exists() else ""
            raise HarnessError(
                f"kwokctl could not start cluster {self.name} ({kwokctl_error(output)}): "
                f"read {self.kwokctl_log}, then run 'rescon cluster down --name {self.name}' and retry",
                detail=output[-3000:],
            )

    def _run_kwokctl_create(self, kwokctl: Path, args: list[str]) -> int:
        """_run_kwokctl_create() runs kwokctl while watching the components it starts.

        kwokctl keeps waiting for a component that has already exited (about two
        minutes for a dead kube-apiserver), so each poll checks the components'
        pid files and stops kwokctl as soon as one has died, reporting its log tail.
        """
        with self.kwokctl_log.open("w") as log:
            process = subprocess.Popen(
                [str(kwokctl), "--name", self.name, *args], env=self._kwokctl_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )

        def finished() -> int:
            self._fail_if_crashed(KWOKCTL_COMPONENTS)
            returncode = process.poll()
            if returncode is None:
                raise NotYet("kwokctl create cluster is still running")
            return returncode

        try:
            return wait_for(finished, what=f"kwokctl to create cluster {self.name}", timeout="cluster_create", timeouts=self.timeouts, hint=f"read {self.kwokctl_log}")
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    def _wait_api_ready(self, kube: Kube) -> None:
        def ready() -> None:
            self._fail_if_crashed(KWOKCTL_COMPONENTS)
            api_ready(kube)

        wait_for(ready, what=f"the API server of cluster {self.name}", timeout="api_ready", timeouts=self.timeouts, hint=f"read {self.logs_dir()}/kube-apiserver.log")

    def _install_storage(self, kube: Kube, binary: Path) -> None:
        """_install_storage() gives the cluster kind's default storage: the `standard` class and its provisioner (harness.cluster.storage)."""
        kube.apply_all(storage.cluster_manifests())
        if self.provisioner_process.alive():
            return
        # A helper pod does nothing worth a second on KWOK; the provisioner polls it once a second.
        config_dir = storage.write_config_dir(self.workdir / "local-path-config", helper_annotations={RUN_FOR: "0s"})
        argv = storage.provisioner_argv(binary, self.kubeconfig, config_dir)
        self.provisioner_process.start(argv, env=storage.provisioner_env(dict(os.environ), config_dir), cwd=self.workdir)
        self._say(f"cluster {self.name}: started the local-path provisioner (log: {self.provisioner_process.log_file})")

    def _install_tekton(self, kube: Kube, toolchain: Toolchain, binary: Path) -> None:
        config_dir = tekton.module_dir(toolchain) / "config"
        kube.apply(tekton.namespace_manifest())
        crds = tekton.crd_manifests(config_dir)
        kube.apply_all(crds)
        self._wait_crds_established(kube, [c["metadata"]["name"] for c in crds])
        kube.apply_all(tekton.config_maps(config_dir, coschedule=self.coschedule))
        # KWOK would finish Tekton's affinity-assistant pods like task pods; keep them Running.
        kube.apply_all(affinity_assistant_policy())
        self._wait_simulation_policy(kube)
        if not self.tekton_process.alive():
            self._start_tekton(binary)
        self._wait_tekton_reconciles(kube)

    def _install_resolvers(self, kube: Kube, toolchain: Toolchain, binary: Path) -> None:
        """_install_resolvers() runs Tekton's remote resolvers (harness.cluster.tekton_resolvers) and waits until the cluster resolver answers."""
        kube.apply(tekton_resolvers.namespace_manifest())
        kube.apply_all(tekton_resolvers.config_maps(tekton.module_dir(toolchain) / "config"))
        if not self.resolvers_process.alive():
            env = tekton_resolvers.resolvers_env(os.environ, metrics_port=free_port(), profiling_port=free_port())
            self.resolvers_process.start(tekton_resolvers.resolvers_argv(binary, self.kubeconfig), env=env, cwd=self.workdir)
            self._say(f"cluster {self.name}: started Tekton's resolvers (log: {self.resolvers_process.log_file})")
        tekton_resolvers.wait_resolves(
            kube,
            timeouts=self.timeouts,
            check_alive=lambda: self._fail_if_crashed((tekton_resolvers.PROCESS,)),
            hint=f"read {self.resolvers_process.log_file}",
        )

    def _wait_simulation_policy(self, kube: Kube) -> None:
        probe = kubernetes.client.V1Pod.model_validate(affinity_assistant_probe_pod(tekton.NAMESPACE))

        def marks() -> None:
            pod = kube.core.create_namespaced_pod(tekton.NAMESPACE, probe, dry_run="All")
            if (present(pod.metadata).annotations or {}).get(HOLD) != "true":
                raise NotYet(f"a dry-run affinity-assistant pod comes back without {HOLD}")

        wait_for(marks, what="the affinity-assistant policy to mark new pods", timeout="simulation_policy_active", timeouts=self.timeouts)

    def _wait_crds_established(self, kube: Kube, names: list[str]) -> None:
        ext = kubernetes.client.ApiextensionsV1Api(kube.api)

        def established() -> None:
            for name in names:
                crd = ext.read_custom_resource_definition(name)
                conditions = {c.type: c.status for c in (present(crd.status).conditions or [])}
                if conditions.get("Established") != "True":
                    raise NotYet(f"CRD {name} is not Established yet")

        wait_for(established, what="Tekton's CRDs", timeout="crd_established", timeouts=self.timeouts)

    def _start_tekton(self, binary: Path) -> None:
        require_free_port(tekton.KNATIVE_HEALTH_PORT)
        ports = {"probes_port": free_port(), "metrics_port": free_port(), "profiling_port": free_port()}
        env = tekton.controller_env(os.environ, **ports)
        self.tekton_process.start(tekton.controller_argv(binary, self.kubeconfig), env=env, cwd=self.workdir)
        (self.workdir / "tekton-ports.yaml").write_text(yaml.safe_dump(ports))
        self._say(f"cluster {self.name}: started Tekton {tekton.version()} (log: {self.tekton_process.log_file})")

    def _wait_tekton_reconciles(self, kube: Kube) -> None:
        tekton.wait_reconciles(
            kube,
            timeouts=self.timeouts,
            check_alive=lambda: self._fail_if_crashed((TEKTON_PROCESS,)),
            hint=f"read {self.tekton_process.log_file}",
        )
        # A mode switch (--coschedule) reaches Tekton a while after the ConfigMap changed.
        tekton.wait_coschedule(
            kube,
            self.coschedule,
            timeouts=self.timeouts,
            check_alive=lambda: self._fail_if_crashed((TEKTON_PROCESS,)),
            hint=f"read {self.tekton_process.log_file}",
        )

    # --- helpers ---

    def _fail_if_crashed(self, names: tuple[str, ...]) -> None:
        for name in names:
            process = ManagedProcess.in_dir(name, self.workdir)
            if process.pid() is not None and not process.alive():
                last_line = tail(process.log_file, 1).strip()[:200] or "no output"
                raise HarnessError(
                    f"{process.name} of cluster {self.name} exited ({last_line}): read {process.log_file}, "
                    f"then run 'rescon cluster down --name {self.name}'",
                    detail=tail(process.log_file, 20),
                )

    def _control_plane_alive(self) -> bool:
        return all(ManagedProcess.in_dir(n, self.workdir).alive() for n in KWOKCTL_COMPONENTS)

    def _kwokctl_path(self) -> Path | None:
        try:
            path = Toolchain(out=self.out).path("kwokctl")
        except HarnessError:
            return None
        return path if path.is_file() else None

    def _kwokctl_env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "KWOK_WORKDIR": str(state_root()),
            "KWOK_KUBE_VERSION": program_named("kube-apiserver").version(),
        }
        # kwokctl runs `kubectl` for some commands; ours, never whatever is on the user's PATH.
        kubectl = Toolchain(out=self.out).path("kubectl")
        env["KWOK_KUBECTL_BINARY"] = str(kubectl)
        kubectl_dir = kubectl.parent
        env["PATH"] = f"{kubectl_dir}{os.pathsep}{env.get('PATH', '')}"
        return env

    def _run_kwokctl(self, kwokctl: Path, args: list[str], *, timeout: float, check: bool) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [str(kwokctl), "--name", self.name, *args], env=self._kwokctl_env(), capture_output=True, text=True, timeout=timeout, check=check
            )
        except subprocess.TimeoutExpired as err:
            raise HarnessError(f"kwokctl {' '.join(args[:2])} took longer than {timeout:g}s: read {self.logs_dir()}") from err

    def _say(self, line: str) -> None:
        print(line, file=self.out, flush=True)


def _stages_text() -> str:
    """_stages_text() is the kwokctl configuration the local cluster is made with: the simulation's Stages."""
    return yaml.safe_dump_all(all_stages(), sort_keys=False)
