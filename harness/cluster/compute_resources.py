"""compute_resources: a container's requests and limits as users write them, GPUs and hugepages included.

The API server takes extended resources (`example.com/gpu`) and hugepages only
with a limit equal to the request (they cannot be overcommitted), and hugepages
only in a container that also asks for cpu or memory, in whole pages
(pkg/apis/core/validation validateResourceRequirements, v1.37). Fixtures ask
for other resources through compute_resources(), so what they apply looks like
what users write and passes that validation; a shape it would refuse fails
here, naming the fix.

    compute_resources(cpu="500m", others={"example.com/gpu": "1", "ephemeral-storage": "6Gi"}) ==
        {"requests": {"cpu": "500m", "example.com/gpu": "1", "ephemeral-storage": "6Gi"},
         "limits": {"example.com/gpu": "1"}}
"""

from __future__ import annotations

from typing import Any, Mapping

from harness.errors import HarnessError
from harness.quantities import units_of
from harness.resource_names import CPU, HUGEPAGES_PREFIX, MEMORY, NATIVE_PREFIX, is_counted, is_hugepages


def needs_equal_limit(resource: str) -> bool:
    """needs_equal_limit() is True for the resources a request must come with an equal limit for: extended ones and hugepages.

    Mirrors IsOvercommitAllowed (pkg/apis/core/helper): native resources but hugepages may be overcommitted.
    """
    native = "/" not in resource or NATIVE_PREFIX in resource
    return is_hugepages(resource) or not native


def page_size_problem(resource: str, quantity: str) -> str:
    """page_size_problem('hugepages-2Mi', '3Mi') says the amount is not whole pages; '' when it is (or for other resources)."""
    if not is_hugepages(resource):
        return ""
    size = units_of(resource, resource.removeprefix(HUGEPAGES_PREFIX))
    if size and units_of(resource, quantity) % size:
        return f"{resource} {quantity} is not a whole number of {resource.removeprefix(HUGEPAGES_PREFIX)} pages"
    return ""


def compute_resources(*, cpu: str | None = None, memory: str | None = None, others: Mapping[str, str] | None = None) -> dict[str, Any]:
    """compute_resources() is a container's `resources` (a step's `computeResources`): requests, and limits where the API server needs them.

    {} when nothing is asked for. HarnessError for a shape the API server
    would refuse: an uncounted name, hugepages without cpu or memory, or
    hugepages that are not whole pages.
    """
    others = dict(others or {})
    for resource, quantity in others.items():
        if resource in (CPU, MEMORY) or not is_counted(resource):
            raise HarnessError(f"resources names {resource!r}: pass cpu and memory as their own arguments, others as ephemeral-storage, "
                               "hugepages-<size> or a name with '/'")
        problem = page_size_problem(resource, quantity)
        if problem:
            raise HarnessError(f"{problem}: ask for a multiple of the page size")
    if any(is_hugepages(r) for r in others) and not (cpu or memory):
        raise HarnessError("hugepages need a cpu or memory request in the same container (the API server refuses them alone): pass cpu= or memory=")
    requests = {**({CPU: cpu} if cpu else {}), **({MEMORY: memory} if memory else {}), **others}
    limits = {r: q for r, q in others.items() if needs_equal_limit(r)}
    return {**({"requests": requests} if requests else {}), **({"limits": limits} if limits else {})}
