"""json_path: one step-by-step read of a raw Kubernetes object, shared by every core module that reads one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def value_at(obj: Mapping[str, Any] | None, *path: str) -> Any:
    """value_at(pod, 'spec', 'nodeName') is the value at the path, or None when any step is missing or not a mapping.

    Example: value_at({'spec': {'nodeName': 'n1'}}, 'spec', 'nodeName') == 'n1';
    value_at({'spec': None}, 'spec', 'nodeName') is None.
    """
    current: Any = obj
    for step in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(step)
    return current
