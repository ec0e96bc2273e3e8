"""Run the reference scheduler under cProfile: `python -m bench.profiled OUT.prof -- <tkn-scheduler args>`.

The scheduler's loop runs on the main thread (with --no-leader-elect), which
is the thread cProfile profiles; informer threads are not included. The
profile is written when the scheduler stops cleanly (SIGTERM).
"""

from __future__ import annotations

import cProfile
import sys
import threading
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[1] != "--":
        print("usage: python -m bench.profiled OUT.prof -- <tkn-scheduler args>", file=sys.stderr)
        return 2
    out, args = argv[0], argv[2:]
    from reference_scheduler.main import main as scheduler_main

    threading.current_thread().name = "main"
    profiler = cProfile.Profile()
    try:
        return int(profiler.runcall(scheduler_main, args))
    finally:
        Path(out).parent.mkdir(parents=True, exist_ok=True)  # a new BENCH_RESULTS_DIR is made only when results are written
        profiler.dump_stats(out)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
