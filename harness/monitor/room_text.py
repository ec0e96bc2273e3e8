"""room_text: a node's arithmetic (harness.monitor.room) as a reader wants it: one short line, and a full table.

The short line goes into a failure's message: for each resource that is over,
the total against allocatable and its largest terms, so the term a scheduler
got wrong is usually in the message itself:

    cpu 4801m > 4800m allocatable: residual ns/a:source 3600m (peak 3800m - its pods 200m) + pod ns/b 1001m + pod ns/a-small 200m

The table goes into an attachment: every term of every resource that is over
(every resource when none is), pods by name, groups by name, in fixed-width
columns, cpu in m, bytes in Mi (in bytes when an amount is not whole Mi), so
two runs that judged the same state print the same text.
"""

from __future__ import annotations

from typing import Sequence

from harness.monitor.room import GroupResidual, NodeRoom
from harness.resource_names import CPU, is_bytes

MI = 2**20
#: How many terms of a resource the short line names, largest first; the rest are summed as "N more".
SHORT_TERMS = 3
#: Where the arithmetic is defined, named in the table's heading.
CONTRACT_SECTION = "docs/contract.md section 7, Headroom"


def unit_of(resource: str, amounts: Sequence[int]) -> str:
    """unit_of() is how a resource's amounts are written: "m" for cpu, "Mi" for bytes when all are whole Mi, "" otherwise.

    Example: unit_of("memory", [2**30, 512 * 2**20]) == "Mi"; unit_of("memory", [4294000000]) == "" (bytes).
    """
    if resource == CPU:
        return "m"
    if is_bytes(resource) and all(a % MI == 0 for a in amounts):
        return "Mi"
    return ""


def quantity(amount: int, unit: str) -> str:
    """quantity(3800, "m") == "3800m"; quantity(2**30, "Mi") == "1024Mi"; quantity(2, "") == "2"."""
    return f"{amount // MI}Mi" if unit == "Mi" else f"{amount}{unit}"


def _unit_name(resource: str, unit: str) -> str:
    """_unit_name() says what a bare number means in a table's heading: bytes, or a count of an extended resource."""
    if unit:
        return ""
    return " (bytes)" if is_bytes(resource) else " (units)"


def _amounts(room: NodeRoom, resource: str) -> list[int]:
    """_amounts() is every number the arithmetic of one resource writes, so that one unit fits all of them."""
    terms = [p.request.get(resource) for p in room.pods]
    for group in room.residuals:
        terms += [group.peak.get(resource), group.pods_request.get(resource), group.residual.get(resource)]
    return terms + [room.total.get(resource), room.allocatable.get(resource)]


def _relation(total: int, allocatable: int) -> str:
    return ">" if total > allocatable else "<="


def _residual_term(group: GroupResidual, resource: str, unit: str) -> str:
    peak, pods = quantity(group.peak.get(resource), unit), quantity(group.pods_request.get(resource), unit)
    return f"residual {group.group} {quantity(group.residual.get(resource), unit)} (peak {peak} - its pods {pods})"


def short_line(room: NodeRoom, resource: str) -> str:
    """short_line() is one resource's sum with its largest terms (residuals before pods on a tie), the rest summed.

    Example: "cpu 4801m > 4800m allocatable: residual ns/a:source 3600m (peak 3800m - its pods 200m) + pod ns/b 1001m + pod ns/a-small 200m".
    """
    unit = unit_of(resource, _amounts(room, resource))
    terms = [(g.residual.get(resource), 0, g.group, _residual_term(g, resource, unit)) for g in room.residuals]
    terms += [(p.request.get(resource), 1, p.pod, f"pod {p.pod} {quantity(p.request.get(resource), unit)}") for p in room.pods]
    named = sorted((t for t in terms if t[0] > 0), key=lambda t: (-t[0], t[1], t[2]))
    shown = [t[3] for t in named[:SHORT_TERMS]]
    rest = named[SHORT_TERMS:]
    if rest:
        shown.append(f"{len(rest)} more {quantity(sum(t[0] for t in rest), unit)}")
    total, allocatable = room.total.get(resource), room.allocatable.get(resource)
    head = f"{resource} {quantity(total, unit)} {_relation(total, allocatable)} {quantity(allocatable, unit)} allocatable"
    return f"{head}: {' + '.join(shown) or 'nothing counted'}"


def shown_resources(room: NodeRoom) -> list[str]:
    """shown_resources() is the resources the arithmetic is written for: those that are over, or every one when none is."""
    return room.over() or room.resources()


def short_arithmetic(room: NodeRoom) -> str:
    """short_arithmetic() is the short lines of the resources that are over (of every one when none is), joined by "; "."""
    return "; ".join(short_line(room, r) for r in shown_resources(room))


def columns(header: Sequence[str], rows: Sequence[Sequence[str]], *, right: frozenset[int]) -> list[str]:
    """columns() writes a header and rows in fixed-width columns, two spaces apart, the `right` ones right-aligned.

    Example: columns(("pod", "request"), [("ns/b", "1001m")], right=frozenset({1})) == ["pod   request", "ns/b    1001m"].
    """
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = [cell.rjust(width) if i in right else cell.ljust(width) for i, (cell, width) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    return [line(header), *(line(row) for row in rows)]


def _pod_rows(room: NodeRoom, resource: str, unit: str) -> list[str]:
    if not room.pods:
        return ["pods: none counted"]
    rows = [(p.pod, quantity(p.request.get(resource), unit), p.phase, p.why, p.group or "-") for p in sorted(room.pods, key=lambda p: p.pod)]
    return columns(("pod", "request", "phase", "why counted", "group"), rows, right=frozenset({1}))


def _residual_rows(room: NodeRoom, resource: str, unit: str) -> list[str]:
    if not room.with_reservations:
        return ["residuals: not counted (placement-only: no records are read)"]
    if not room.residuals:
        return ["residuals: none (no group is Reserved on this node)"]
    rows = [
        (g.group, quantity(g.peak.get(resource), unit), str(len(g.pods)), quantity(g.pods_request.get(resource), unit), quantity(g.residual.get(resource), unit))
        for g in sorted(room.residuals, key=lambda g: g.group)
    ]
    header = ("Reserved group", "peak", "its pods", "their requests", "residual")
    return ["residual = max(0, peak - the requests of its pods counted here)", *columns(header, rows, right=frozenset({1, 2, 3, 4}))]


def resource_block(room: NodeRoom, resource: str) -> list[str]:
    """resource_block() is one resource's arithmetic: a heading, the pods, the residuals and the sum."""
    unit = unit_of(resource, _amounts(room, resource))
    total, allocatable = room.total.get(resource), room.allocatable.get(resource)
    over = f", {quantity(total - allocatable, unit)} over" if total > allocatable else ""
    heading = f"{resource}{_unit_name(resource, unit)}: {quantity(total, unit)} counted {_relation(total, allocatable)} {quantity(allocatable, unit)} allocatable{over}"
    pods, residuals = quantity(room.pods_total.get(resource), unit), quantity(room.residuals_total.get(resource), unit)
    body = [*_pod_rows(room, resource, unit), *_residual_rows(room, resource, unit)]
    body.append(f"pods {pods} + residuals {residuals} = {quantity(total, unit)} {_relation(total, allocatable)} allocatable {quantity(allocatable, unit)}")
    return [heading, *("  " + line for line in body)]


def room_table(room: NodeRoom) -> str:
    """room_table() is the node's whole arithmetic as text: what is over, then one block per resource shown (see the module's docstring)."""
    over = room.over()
    said = f"over on {', '.join(over)}" if over else "nothing over"
    lines = [f"room on node {room.node} ({CONTRACT_SECTION}): {said}"]
    for resource in shown_resources(room):
        lines += resource_block(room, resource)
    return "\n".join(lines)
