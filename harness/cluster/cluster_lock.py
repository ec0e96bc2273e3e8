"""cluster_lock: one user of the local cluster at a time, machine-wide.

The local cluster is one per machine (Tekton's controller needs port 8080),
and two suite runs on it at once fail each other for reasons that have nothing
to do with the scheduler under test. Every session that uses it (the
conformance suite, the integration tests, the benchmark, `rescon cluster
up/down`) holds an exclusive `flock` on a file in the tool cache for as long as
it uses the cluster; the next one waits, says for whom, and gives up after the
`cluster_lock` timeout.

A process started by a holder (a scheduler under test, a nested pytest) sees
RESCON_LOCAL_CLUSTER_LOCK in its environment and does not take the lock again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from pathlib import Path
from typing import IO, Callable, Iterator

from harness.cluster.paths import cache_root
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, WaitTimeout, wait_for

#: Set while a process (or an ancestor) holds the lock; its value is the holder's pid.
HELD_ENV = "RESCON_LOCAL_CLUSTER_LOCK"

#: How often a waiting session says that it still waits.
PROGRESS_SECONDS = 30.0


def lock_path() -> Path:
    """lock_path() is the lock file, beside the per-user toolchain cache."""
    return cache_root() / "local-cluster.lock"


def holder_of(path: Path) -> str:
    """holder_of() is what the current holder wrote into the lock file ("pid 123: pytest ..."), or "unknown"."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return "unknown"
    return text or "unknown"


def _try_lock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _default_say(line: str) -> None:
    # The real stderr: pytest captures sys.stderr during fixtures, and a wait must be seen while it lasts.
    print(f"rescon: {line}", file=sys.__stderr__ or sys.stderr, flush=True)


@contextlib.contextmanager
def local_cluster_lock(*, timeouts: TimeoutConfig, purpose: str, say: Callable[[str], None] = _default_say) -> Iterator[None]:
    """local_cluster_lock(timeouts=cfg, purpose='conformance suite') holds the machine's local-cluster lock.

    Waits at most `timeouts.cluster_lock` seconds, saying every
    PROGRESS_SECONDS who holds it; reentrant for the holder's child processes.
    """
    if os.environ.get(HELD_ENV):
        yield
        return
    path = lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open for as long as the lock is held
    try:
        _acquire(handle, path, timeouts=timeouts, purpose=purpose, say=say)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}: {purpose} ({' '.join(sys.argv)[:200]})\n")
        handle.flush()
        os.environ[HELD_ENV] = str(os.getpid())
        try:
            yield
        finally:
            os.environ.pop(HELD_ENV, None)
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    finally:
        handle.close()


def _acquire(handle: IO[str], path: Path, *, timeouts: TimeoutConfig, purpose: str, say: Callable[[str], None]) -> None:
    if _try_lock(handle):
        return
    say(f"the local cluster is in use ({holder_of(path)}); {purpose} waits for it (at most {timeouts.cluster_lock:g}s, cluster_lock)")
    last_said = [time.monotonic()]
    # A blocked flock is granted by the kernel the moment the holder lets go, before a holder that runs
    # suite after suite (a kill table) can start its next one; polling with LOCK_NB would keep losing that race.
    acquired = threading.Event()

    def block() -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        acquired.set()

    threading.Thread(target=block, name="cluster-lock", daemon=True).start()

    def poll() -> None:
        if acquired.is_set():
            return
        holder = holder_of(path)
        if time.monotonic() - last_said[0] >= PROGRESS_SECONDS:
            last_said[0] = time.monotonic()
            say(f"still waiting for the local cluster ({holder})")
        raise NotYet(f"held by {holder}")

    try:
        wait_for(poll, what="the local cluster to be free", timeout="cluster_lock", timeouts=timeouts)
    except WaitTimeout as err:
        raise WaitTimeout(f"{err}; wait for that run to end, or raise --rescon-timeout cluster_lock=SECONDS") from None
