"""follow: a round's runs followed to their ends, with progress lines, in one bounded wait (`replay_run_done`).

One list of the namespace's PipelineRuns a poll sees every run at once; a run
is done once its Succeeded condition is True or False (harness.runs.is_done).
Each run that ends gets a progress line, and while none does a line every
PROGRESS_SECONDS names the runs still going. When the wait runs out, the runs
still going are returned with how they stood, never waited for again: a pod
nobody binds ends a replay, it does not hang it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness import runs
from harness.kube import Kube, json_object
from harness.replay.output import progress_line
from harness.timeouts import TimeoutConfig
from harness.waits import NotYet, WaitTimeout, wait_for

Obj = dict[str, Any]

#: How often, at most, a line says which runs are still going when none has ended.
PROGRESS_SECONDS = 30.0


@dataclass(frozen=True)
class Followed:
    """Followed is how a run was last seen: ended (with its seconds from its creation) or still going (`ended` None, `unfinished` says how)."""

    ended: Obj | None
    seconds: float
    unfinished: str = ""


def list_runs(kube: Kube, namespace: str) -> dict[str, Obj]:
    """list_runs() is every PipelineRun of the namespace by name, in one read."""
    items = json_object(kube.custom.list_namespaced_custom_object(runs.GROUP, runs.VERSION, namespace, "pipelineruns"))["items"]
    return {str(item["metadata"]["name"]): item for item in items}


def _reason(run: Mapping[str, Any]) -> str:
    return str((runs.succeeded(run) or {}).get("reason") or "ended")


def follow_round(
    kube: Kube,
    namespace: str,
    created: Mapping[str, float],
    *,
    timeouts: TimeoutConfig,
    on_poll: Callable[[], None],
    say: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Followed]:
    """follow_round() returns every run of `created` (name -> when it was created, by `clock`) once all have ended or replay_run_done ran out.

    `on_poll` runs at every poll first: it fails the wait at once if the scheduler died, and says new violations.
    """
    names: Sequence[str] = list(created)
    started = min(created.values(), default=clock())
    followed: dict[str, Followed] = {}
    latest: dict[str, Obj] = {}
    said = [clock()]

    def poll() -> None:
        on_poll()
        seen = list_runs(kube, namespace)
        for name in names:
            if name in followed or name not in seen:
                continue
            latest[name] = seen[name]
            if runs.is_done(seen[name]):
                followed[name] = Followed(seen[name], clock() - created[name])
                said[0] = clock()
                say(progress_line(len(followed), len(names), clock() - started, latest=f"{name} {_reason(seen[name])}"))
        going = [name for name in names if name not in followed]
        if not going:
            return
        if clock() - said[0] >= PROGRESS_SECONDS:
            said[0] = clock()
            say(progress_line(len(followed), len(names), clock() - started, waiting=going))
        first = going[0]
        state = runs.describe(latest[first]) if first in latest else "not seen yet"
        raise NotYet(f"{len(going)} of {len(names)} runs still going, {first} first: {state}")

    try:
        wait_for(poll, what=f"the round's {len(names)} runs to end", timeout="replay_run_done", timeouts=timeouts)
    except WaitTimeout:
        for name in names:
            if name not in followed:
                state = runs.describe(latest[name]) if name in latest else "never seen"
                followed[name] = Followed(None, clock() - created[name], f"did not end within {timeouts.replay_run_done:g}s (replay_run_done): {state}")
    return {name: followed[name] for name in names}
