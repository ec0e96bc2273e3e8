"""The local cluster's machine-wide lock: one holder, the next waits and names it, children reenter."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cluster import cluster_lock
from harness.timeouts import DEFAULT_TIMEOUTS

pytest_plugins = ("pytester",)
pytestmark = pytest.mark.unit

#: A second process that tries the lock for half a second.
CONTENDER = """
import dataclasses, sys
from harness.cluster.cluster_lock import local_cluster_lock
from harness.timeouts import DEFAULT_TIMEOUTS
from harness.waits import WaitTimeout
try:
    with local_cluster_lock(timeouts=dataclasses.replace(DEFAULT_TIMEOUTS, cluster_lock=0.5), purpose="contender", say=lambda line: None):
        print("acquired")
except WaitTimeout as err:
    print(err)
"""


def _contend(tmp_path: Path, *, inherit_holder: bool) -> str:
    env = {**os.environ, "RESCON_CACHE_DIR": str(tmp_path)}
    if not inherit_holder:
        env.pop(cluster_lock.HELD_ENV, None)
    done = subprocess.run([sys.executable, "-c", CONTENDER], env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture(autouse=True)
def _not_a_holder_already(monkeypatch: pytest.MonkeyPatch) -> None:
    # This process starts holding nothing, whatever ran before it in the same worker.
    monkeypatch.delenv(cluster_lock.HELD_ENV, raising=False)


def test_a_second_session_waits_and_names_the_holder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    with cluster_lock.local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="first suite", say=lambda line: None):
        out = _contend(tmp_path, inherit_holder=False)
    assert "timed out after 0.5s (cluster_lock)" in out
    assert f"pid {os.getpid()}: first suite" in out
    assert "--rescon-timeout cluster_lock=SECONDS" in out


def test_the_lock_is_free_again_after_the_holder_leaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    with cluster_lock.local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="first suite", say=lambda line: None):
        pass
    assert _contend(tmp_path, inherit_holder=False) == "acquired"
    assert cluster_lock.HELD_ENV not in os.environ


def test_a_child_of_the_holder_does_not_wait_for_its_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    with cluster_lock.local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="kill table", say=lambda line: None):
        assert _contend(tmp_path, inherit_holder=True) == "acquired"


def test_waiting_says_who_holds_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    said: list[str] = []
    short = dataclasses.replace(DEFAULT_TIMEOUTS, cluster_lock=0.3)
    other = open(cluster_lock.lock_path(), "a+", encoding="utf-8")
    try:
        import fcntl

        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        other.write("pid 1: somebody's bench\n")
        other.flush()
        monkeypatch.delenv(cluster_lock.HELD_ENV, raising=False)
        with pytest.raises(cluster_lock.WaitTimeout, match="held by pid 1: somebody's bench"):
            with cluster_lock.local_cluster_lock(timeouts=short, purpose="my suite", say=said.append):
                pass
    finally:
        other.close()
    assert said and "in use (pid 1: somebody's bench); my suite waits" in said[0]


def test_a_waiting_session_gets_the_lock_as_soon_as_the_holder_lets_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(cluster_lock.HELD_ENV, raising=False)
    env = {k: v for k, v in os.environ.items() if k != cluster_lock.HELD_ENV}
    waiting = CONTENDER.replace("cluster_lock=0.5", "cluster_lock=60")
    with cluster_lock.local_cluster_lock(timeouts=DEFAULT_TIMEOUTS, purpose="first suite", say=lambda line: None):
        contender = subprocess.Popen([sys.executable, "-c", waiting], env=env, stdout=subprocess.PIPE, text=True)
        # Give it time to start waiting: it must not get the lock while we hold it.
        with pytest.raises(subprocess.TimeoutExpired):
            contender.wait(timeout=1.5)
    out, _ = contender.communicate(timeout=30)
    assert out.strip() == "acquired"


#: A session whose one test uses the `cluster` fixture (replaced here, so no cluster is touched).
LOCKED_BEFORE_THE_FIRST_TEST = {
    "conftest": '''
import os
import pytest

@pytest.fixture(scope="session")
def cluster():
    assert os.environ.get("RESCON_LOCAL_CLUSTER_LOCK"), "the session did not hold the cluster's lock before its first test"
    yield None
''',
    "test_uses_cluster": "def test_uses_cluster(cluster):\n    assert cluster is None\n",
}


def test_a_plain_session_waits_for_the_lock_before_its_first_test_so_pytest_timeout_does_not_count_it(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Held for 2 s after a `--timeout 1` session says it waits, the lock delays the session without failing its test.

    The holder lets go only once the session has said it waits: a fixed hold from the
    start would race the session's own start-up on a loaded machine (it once took
    more than the hold, found the lock free and never waited).
    """
    import fcntl
    import queue
    import threading

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("RESCON_CACHE_DIR", str(cache))
    monkeypatch.delenv(cluster_lock.HELD_ENV, raising=False)
    pytester.makeconftest(LOCKED_BEFORE_THE_FIRST_TEST["conftest"])
    pytester.makepyfile(test_uses_cluster=LOCKED_BEFORE_THE_FIRST_TEST["test_uses_cluster"])
    with open(cache / "local-cluster.lock", "a+", encoding="utf-8") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        session = pytester.popen(
            [sys.executable, "-m", "pytest", "--timeout", "1", "-p", "no:cacheprovider"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        lines: queue.Queue[str] = queue.Queue()
        output: list[str] = []

        def read() -> None:
            for raw in session.stdout:
                output.append(raw.decode())
                lines.put(output[-1])

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        said = ""
        while "the local cluster is in use" not in said:
            said = lines.get(timeout=60)  # queue.Empty: the session never said it waits
        release = threading.Timer(2.0, fcntl.flock, (other.fileno(), fcntl.LOCK_UN))
        release.start()
        session.wait(timeout=120)
        release.join()
        reader.join(timeout=10)
    assert session.returncode == 0, "".join(output)
    assert any("1 passed" in line for line in output), "".join(output)
