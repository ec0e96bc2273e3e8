"""Features: what an implementation may claim to support, and so what the suite tests.

A scenario declares the features it exercises; the runner skips a scenario
that needs a feature the implementation does not support ("implementation
does not support X") or an opt-in feature nobody asked for, and the report
counts core and extended features apart.
"""

from __future__ import annotations

from enum import StrEnum

from harness.errors import HarnessError


class Feature(StrEnum):
    """Feature names, as written on the command line and in the ConformanceReport."""

    COLOCATION = "Colocation"
    PEAK_RESERVATION = "PeakReservation"
    RETRY_HOLD = "RetryHold"
    BIND_ROLLBACK = "BindRollback"
    #: The implementation publishes ReservationRecords (docs/contract.md); without it, placement checks only.
    RESERVATION_RECORDS = "ReservationRecords"
    #: A cancelled or deleted PipelineRun's groups are Released, and their room serves other runs again.
    RELEASE = "Release"
    #: Reservations survive a scheduler restart: they live in the API (the records), not in its memory.
    RESTART = "Restart"
    #: A deleted node drops the claims on it: the group goes back to Pending and claims anew elsewhere.
    NODE_LOSS = "NodeLoss"
    #: Workspaces on volumes that live somewhere: a claim of the default class (WaitForFirstConsumer) is provisioned
    #: on the group's node, and a node-local volume's node affinity decides where its group may go (docs/contract.md).
    VOLUMES = "Volumes"
    #: Extended: lowers a lingering pod's requests after its TaskRun is done.
    RESIZE = "Resize"
    #: Extended, opt-in: fifty runs at once (200 pods) into a tight pool. Tested only when asked for
    #: (--supported-features ...,Load, --all-features, or `make load`): it is a stress test, about a minute.
    LOAD = "Load"
    #: Extended: reservations survive what production does to a cluster: the API server, etcd or Tekton's controller
    #: restarted, a group's node tainted or NotReady, a group's pod evicted; claims hold, nothing leaks or double-books.
    RESILIENCE = "Resilience"
    #: Extended, opt-in: PipelineRuns drawn from a grammar of Tekton features (seeded, replayable), a few at once on
    #: a tight pool; each run's groups and peaks are computed by the suite itself and compared with the record.
    GENERATIVE = "Generative"


CORE_FEATURES: frozenset[Feature] = frozenset(
    {
        Feature.COLOCATION,
        Feature.PEAK_RESERVATION,
        Feature.RETRY_HOLD,
        Feature.BIND_ROLLBACK,
        Feature.RELEASE,
        Feature.RESTART,
        Feature.NODE_LOSS,
        Feature.VOLUMES,
        Feature.RESERVATION_RECORDS,
    }
)
EXTENDED_FEATURES: frozenset[Feature] = frozenset({Feature.RESIZE, Feature.LOAD, Feature.RESILIENCE, Feature.GENERATIVE})
ALL_FEATURES: frozenset[Feature] = CORE_FEATURES | EXTENDED_FEATURES
#: Tested only when named (or with --all-features), even for an implementation that supports everything.
#: Resilience is opt-in until each of its scenarios has passed the reference 10 of 10 (docs/coverage.md);
#: Generative is opt-in so that a third party's run stays the same from one session to the next (it draws new runs
#: each session unless given a seed); `make e2e` and `make soak` name it (--with-features) with a budget of their own.
OPT_IN_FEATURES: frozenset[Feature] = frozenset({Feature.LOAD, Feature.RESILIENCE, Feature.GENERATIVE})


def parse_features(text: str | None) -> frozenset[Feature]:
    """parse_features('Colocation,Resize') -> {Feature.COLOCATION, Feature.RESIZE}; unknown names fail listing the known ones."""
    if not text:
        return frozenset()
    found = set()
    for name in (part.strip() for part in text.split(",")):
        if not name:
            continue
        try:
            found.add(Feature(name))
        except ValueError:
            known = ", ".join(sorted(f.value for f in Feature))
            raise HarnessError(f"unknown feature {name!r}: use one of {known}") from None
    return frozenset(found)


def resolve_supported(
    *,
    declared: frozenset[Feature],
    exempt: frozenset[Feature],
    all_features: bool,
    default: frozenset[Feature],
    also: frozenset[Feature] = frozenset(),
) -> frozenset[Feature]:
    """resolve_supported() applies --all-features, --supported-features, --with-features and --exempt-features, in that order.

    Example: the reference's default with ``also={Generative}`` is every feature but Load and Resilience.
    """
    base = ALL_FEATURES if all_features else (declared or default)
    return frozenset((base | also) - exempt)
