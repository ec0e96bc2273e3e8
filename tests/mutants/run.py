"""Run one mutant: `python -m tests.mutants.run <mutant> [tkn-scheduler flags]`.

It applies the mutant's patch, then starts the reference scheduler's own entry
point with the remaining flags, so it is a drop-in `--scheduler-cmd`:

    env PYTHONPATH=/path/to/checkout .venv/bin/python -m tests.mutants.run max_peak \\
        --kubeconfig {kubeconfig} --scheduler-name {scheduler_name} --no-leader-elect --metrics-port 0
"""

from __future__ import annotations

import sys
import threading
from typing import Sequence

from .faults import MUTANTS
from .intermittent import INTERMITTENT


def main(argv: Sequence[str]) -> int:
    runnable = {**MUTANTS, **INTERMITTENT}
    if not argv or argv[0] not in runnable:
        given = repr(argv[0]) if argv else "nothing"
        print(f"tests.mutants.run: got {given}: name a mutant first, one of {', '.join(runnable)}", file=sys.stderr)
        return 2
    mutant = runnable[argv[0]]
    mutant.apply()
    print(f"tests.mutants.run: mutant {mutant.name}: {mutant.fault}", file=sys.stderr, flush=True)
    from reference_scheduler.main import main as scheduler_main

    return scheduler_main(list(argv[1:]))


if __name__ == "__main__":
    threading.current_thread().name = "main"
    sys.exit(main(sys.argv[1:]))
