"""Background processes the harness starts and must be able to stop from any later command.

A ManagedProcess is identified by a pid file and writes to a log file, both in
the cluster's work directory, so `rescon cluster down` run from another shell
can stop what `rescon cluster up` started. Processes start in their own session
so a Ctrl-C in the user's terminal does not kill a cluster meant to outlive it.
A process that must not outlive the session that started it (the scheduler under
test) is started with `dies_with_parent`: the kernel kills it when its parent
exits, however the parent ends (a killed pytest worker included).
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from harness.errors import HarnessError


def free_port() -> int:
    """free_port() asks the kernel for a free loopback port (racy, but ports are picked right before use)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def tail(path: Path, lines: int = 30) -> str:
    """tail(log) is the last lines of a log, for error messages; '' when there is none."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read().decode(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); reap it if it is ours.
    try:
        reaped, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return _not_zombie(pid)
    return reaped == 0


#: prctl(2)'s option that sets the signal a process gets when its parent exits.
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """_die_with_parent() runs in the child before exec: SIGKILL it when the harness process that started it exits."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _not_zombie(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@dataclass(frozen=True)
class ManagedProcess:
    """ManagedProcess is a named background process with a pid file and a log file."""

    name: str
    pid_file: Path
    log_file: Path

    @classmethod
    def in_dir(cls, name: str, workdir: Path) -> ManagedProcess:
        return cls(name, workdir / "pids" / f"{name}.pid", workdir / "logs" / f"{name}.log")

    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def alive(self) -> bool:
        pid = self.pid()
        return pid is not None and pid_alive(pid)

    def start(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, dies_with_parent: bool = False) -> int:
        """start() launches argv detached, logging to log_file; fails if argv[0] is not executable.

        With dies_with_parent the process gets SIGKILL when this process exits (Linux's parent-death signal).
        """
        if self.alive():
            raise HarnessError(f"{self.name} is already running (pid {self.pid()}): run 'rescon cluster down' first")
        if not os.access(argv[0], os.X_OK):
            raise HarnessError(f"{argv[0]} is not an executable: run 'make tools' to build it")
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        with self.log_file.open("ab") as log:
            process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent if dies_with_parent else None,
            )
        self.pid_file.write_text(str(process.pid))
        return process.pid

    def stop(self, *, grace_seconds: float) -> None:
        """stop() sends SIGTERM, then SIGKILL after grace_seconds; idempotent."""
        pid = self.pid()
        if pid is None or not pid_alive(pid):
            self.pid_file.unlink(missing_ok=True)
            return
        for sig, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            except PermissionError:
                os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and pid_alive(pid):
                time.sleep(0.1)
            if not pid_alive(pid):
                break
        if pid_alive(pid):
            raise HarnessError(f"{self.name} (pid {pid}) did not stop after SIGKILL: stop it by hand")
        self.pid_file.unlink(missing_ok=True)

    def crash_report(self) -> str:
        """crash_report() is the one-line error for a process that died, with its log tail as detail."""
        return f"{self.name} is not running: read {self.log_file}"
