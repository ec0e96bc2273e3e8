"""heap: the garbage collector while the scheduler imports and its caches first fill, and after.

The informers' first LISTs decode the whole cluster at once: 5000 nodes are about 300,000 dicts
and lists. With the collector on, each full collection during that decoding walks every object
decoded so far (three of them at 5000 nodes), and every full collection afterwards walks the
caches, the imports and all, again: at 5000 nodes and 300 pods that was 0.7 s of the scheduler's
2.4 s of CPU (bench/offline_backlog.py, docs/benchmarks/findings.md). Nothing in the caches waits for
the collector: JSON holds no reference cycles, so reference counting frees a replaced object at once.

`filling_caches()` keeps the collector off while the caches fill, then freezes every object alive
(`gc.freeze`: the imports and the first caches move to the permanent generation), so later
collections walk only what came after. The price is that cyclic garbage made during the start is
never collected: a few hundred objects, once.

`importing()` does the same for the imports: `import reference_scheduler.main` makes about 80,000
objects the collector tracks (kubernetes, pydantic, urllib3, the scheduler's modules) and about 650
in cycles. With the collector on, 106 young collections walked them as they came, about 20 ms of a
0.29 s import; only turned off and on again, it walks them all at once on the first allocation after.
Frozen, it never walks them (filling_caches() would freeze them a moment later anyway), and the
cycles among them are never freed, as the start's are.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def filling_caches() -> Iterator[None]:
    """filling_caches() is a `with` block in which the collector is off; once it ends well, every object alive is frozen."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
        gc.freeze()
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def importing() -> Iterator[None]:
    """importing() is filling_caches() for the process's imports: no collection while they run, everything they made frozen after."""
    with filling_caches():
        yield
