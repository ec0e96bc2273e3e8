"""seeds: a scenario's seed, noted on its test item so that the report can name it for each attempt.

The suite seeds nothing on its own: a scenario's namespace gets a random
suffix, and the local cluster's simulated steps last a random while, from the
kernel's randomness. Only the generative scenario draws from a seed (a new one
per attempt, unless --rescon-generative-seed names one), and that seed is what
replays it. It notes the seed here; the plugin takes it when it reports the
attempt (harness.report.attempts), so a rerun's attempt never shows the seed
of the attempt before.

    note_seed(request.node, seed)   # in the scenario's body
    take_seed(item)                 # in the plugin, once per attempt: the seed, then None
"""

from __future__ import annotations

import pytest

SEED_KEY = pytest.StashKey[int]()


def note_seed(item: pytest.Item, seed: int) -> None:
    """note_seed() records the seed the current attempt of the item draws from."""
    item.stash[SEED_KEY] = seed


def take_seed(item: pytest.Item) -> int | None:
    """take_seed() is the seed the current attempt noted, or None, and forgets it."""
    seed = item.stash.get(SEED_KEY, None)
    if seed is not None:
        del item.stash[SEED_KEY]
    return seed
