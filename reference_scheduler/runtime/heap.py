"""heap: the garbage collector while the caches first fill, and after.

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
