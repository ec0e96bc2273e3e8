"""Keys that name the things the scheduler keeps state for."""

from __future__ import annotations

from typing import NamedTuple


class GroupKey(NamedTuple):
    """GroupKey names one reservation group: the tasks of one PipelineRun that share a workspace.

    A group is the unit that gets one reservation on one node, so it is the key
    of every per-group table (claims, active reservations, pods of the group on
    a node). It is immutable and ordered so that it can be a dict key and so that
    reports list groups in a stable order; a named tuple, so that the accounting's
    many comparisons of keys run in C. Compare it only with other GroupKeys.

    Example: the group ``g0`` of PipelineRun ``build-7x2`` in namespace ``ci``::

        >>> key = GroupKey("ci", "build-7x2", "g0")
        >>> str(key)
        'ci/build-7x2/g0'
        >>> key == GroupKey("ci", "build-7x2", "g0")
        True
    """

    namespace: str
    pipeline_run: str
    group: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pipeline_run}/{self.group}"
