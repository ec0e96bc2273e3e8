"""A reference run's CPU by thread, and its new HTTPS connections: on PYTHONPATH with BENCH_THREAD_CPU=PREFIX set.

    PYTHONPATH=$PWD:$PWD/bench/thread_cpu BENCH_THREAD_CPU=/tmp/cpu BENCH_BASELINE_TREE=/tmp/base \\
        .venv/bin/python -m bench.backlog_turns --turns 3 --kinds reference-baseline,reference

Python imports `sitecustomize` at start, so every Python process started with this directory on its path
(bench.backlog_turns passes its PYTHONPATH on to the schedulers) writes PREFIX.PID.json when it exits:
each thread's user+system CPU from /proc/self/task (read every 0.2 s, so threads that ended are kept),
threads named as `threading` names them with their trailing numbers dropped (bind-0..7 -> bind-; a thread that
ended misses its last 0.2 s at most), the
whole process's CPU, urllib3's new HTTPS connections by the thread that opened them, the connections
closed because their pool was full, and the garbage collector's collections and CPU. It imports urllib3
before the program does, and its sampling thread costs a little CPU of its own (its row): for finding where
the CPU goes, not for the bench's figures.
"""

from __future__ import annotations

import os

if os.environ.get("BENCH_THREAD_CPU"):
    import atexit
    import collections
    import gc
    import json
    import threading
    import time
    from typing import Any

    import urllib3.connectionpool as connectionpool

    _PREFIX = os.environ["BENCH_THREAD_CPU"]
    _TICK = os.sysconf("SC_CLK_TCK")
    _counts: collections.Counter[str] = collections.Counter()
    _threads: dict[str, tuple[str, float]] = {}  # tid -> (name, CPU seconds), kept after the thread ends
    _collections = [0, 0, 0]
    _collection_seconds = [0.0, 0.0]  # in all, and the running collection's start

    def _cpu(stat_path: str) -> float:
        with open(stat_path) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK

    def _sample() -> None:
        names = {t.native_id: t.name for t in threading.enumerate()}
        for tid in os.listdir("/proc/self/task"):
            try:
                cpu = _cpu(f"/proc/self/task/{tid}/stat")
            except OSError:
                continue
            _threads[tid] = (names.get(int(tid)) or _threads.get(tid, ("?", 0.0))[0], cpu)

    def _sampling() -> None:
        while True:
            time.sleep(0.2)
            _sample()

    _new_conn = connectionpool.HTTPSConnectionPool._new_conn
    _put_conn = connectionpool.HTTPConnectionPool._put_conn

    def _counted_new_conn(self: Any) -> Any:
        _counts["new HTTPS connections"] += 1
        _counts[f"new HTTPS connections: {threading.current_thread().name.rstrip('0123456789')}"] += 1
        return _new_conn(self)

    def _counted_put_conn(self: Any, conn: Any) -> None:
        if self.pool is not None and self.pool.full():
            _counts["closed: pool full"] += 1
        _put_conn(self, conn)

    def _timed_collection(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            _collection_seconds[1] = time.thread_time()
        else:
            _collections[info["generation"]] += 1
            _collection_seconds[0] += time.thread_time() - _collection_seconds[1]

    def _write() -> None:
        _sample()
        by_thread: dict[str, float] = collections.defaultdict(float)
        for name, cpu in _threads.values():
            by_thread[name.rstrip("0123456789")] += cpu
        report: dict[str, Any] = {"process_cpu": _cpu("/proc/self/stat"), "thread_cpu": dict(sorted(by_thread.items(), key=lambda item: -item[1])), "counts": dict(_counts),
                  "gc": {"collections": _collections, "seconds": _collection_seconds[0]}}
        with open(f"{_PREFIX}.{os.getpid()}.json", "w") as out:
            json.dump(report, out, indent=1)

    connectionpool.HTTPSConnectionPool._new_conn = _counted_new_conn  # type: ignore[method-assign]
    connectionpool.HTTPConnectionPool._put_conn = _counted_put_conn  # type: ignore[method-assign]
    gc.callbacks.append(_timed_collection)
    threading.Thread(target=_sampling, name="thread-cpu-sampler", daemon=True).start()
    atexit.register(_write)
