"""Restarts: stop one process of the local cluster and start it again exactly as it ran.

The Resilience scenarios restart a component (kube-apiserver, etcd, Tekton's
controller) while a group holds its reservation. kwokctl has no per-component
restart, so the harness reads how the process was launched from /proc (its
argv, environment and working directory), stops it through its pid file as
`rescon cluster down` would, and launches the same command again, logging to
the same file.

A restart of kube-apiserver or etcd can take the cluster's leader-elected
controllers with it: kube-controller-manager and kube-scheduler exit when they
cannot renew their lease for 10 s. So every component's launch is read before
the restart, and afterwards any component that died is started again the same
way (`revive`), so that a restart never leaves the shared cluster short of a
process.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.cluster.processes import ManagedProcess
from harness.errors import HarnessError


@dataclass(frozen=True)
class Launch:
    """Launch is how a running process was started: what `ManagedProcess.start` needs to start it again."""

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path


def split_nul(data: bytes) -> list[str]:
    """split_nul(b'etcd\\x00--name=node0\\x00') == ['etcd', '--name=node0']: /proc's cmdline and environ format."""
    return [part.decode(errors="surrogateescape") for part in data.split(b"\0") if part]


def parse_environ(data: bytes) -> dict[str, str]:
    """parse_environ(b'A=1\\x00B=x=y\\x00') == {'A': '1', 'B': 'x=y'}: the first '=' splits name from value."""
    env: dict[str, str] = {}
    for entry in split_nul(data):
        name, sep, value = entry.partition("=")
        if sep and name:
            env[name] = value
    return env


def launch_of(process: ManagedProcess, *, proc: Path = Path("/proc")) -> Launch:
    """launch_of() reads a running process's argv, environment and working directory from /proc.

    Fails naming the process when it is not running or /proc cannot be read
    (the harness restarts only what this user started).
    """
    pid = process.pid()
    if pid is None or not process.alive():
        raise HarnessError(f"{process.name} is not running, so it cannot be restarted: read {process.log_file}")
    base = proc / str(pid)
    try:
        argv = split_nul((base / "cmdline").read_bytes())
        env = parse_environ((base / "environ").read_bytes())
        cwd = (base / "cwd").resolve(strict=True)
    except OSError as err:
        raise HarnessError(f"cannot read how {process.name} (pid {pid}) was started from {base}: {err}") from err
    if not argv:
        raise HarnessError(f"{process.name} (pid {pid}) has an empty command line in {base}/cmdline")
    return Launch(tuple(argv), env, cwd)


def relaunch(process: ManagedProcess, launch: Launch) -> int:
    """relaunch() starts the process again from its Launch, appending to its log; returns the new pid."""
    return process.start(list(launch.argv), env=launch.env, cwd=launch.cwd)


def revive(launches: dict[str, Launch], processes: dict[str, ManagedProcess]) -> list[str]:
    """revive() starts again every process of `launches` that is no longer alive; returns their names."""
    revived = []
    for name, launch in launches.items():
        process = processes[name]
        if not process.alive():
            relaunch(process, launch)
            revived.append(name)
    return revived
