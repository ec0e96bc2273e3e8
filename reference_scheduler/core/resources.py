"""Resources: the CPU and memory amounts the scheduler reasons about.

Quantities are kept as integers (millicores and bytes) so that sums and
comparisons are exact; Kubernetes quantity strings are parsed once, at the edge.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Iterable, Mapping, NamedTuple

from kubernetes.utils.quantity import parse_quantity


class InvalidQuantity(ValueError):
    """A resource quantity that Kubernetes would also reject."""


def _parse(value: object, what: str) -> Decimal:
    try:
        parsed: Decimal = parse_quantity(value)  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, InvalidOperation) as err:
        raise InvalidQuantity(
            f"invalid {what} quantity {value!r}: use a Kubernetes quantity such as '500m', '2' or '1Gi'"
        ) from err
    if parsed < 0:
        raise InvalidQuantity(f"invalid {what} quantity {value!r}: quantities must not be negative")
    return parsed


def cpu_millis(value: object) -> int:
    """cpu_millis('1.5') == 1500; fractions of a millicore round up, as the API server does."""
    return int((_parse(value, "cpu") * 1000).to_integral_value(rounding="ROUND_CEILING"))


def memory_bytes(value: object) -> int:
    """memory_bytes('1Gi') == 1073741824; fractional bytes round up."""
    return int(_parse(value, "memory").to_integral_value(rounding="ROUND_CEILING"))


class Resources(NamedTuple):
    """An amount of CPU (millicores) and memory (bytes).

    A named tuple, not a frozen dataclass: the accounting makes and compares
    millions of these per second at 1000 nodes, and a tuple is built and
    compared in C. Compare it only with other Resources.
    """

    cpu: int = 0
    memory: int = 0

    @classmethod
    def from_mapping(cls, amounts: Mapping[str, object] | None) -> Resources:
        """Resources.from_mapping({'cpu': '200m', 'memory': '64Mi'}); other resources are ignored."""
        if not amounts:
            return cls()
        cpu = amounts.get("cpu")
        memory = amounts.get("memory")
        return cls(
            cpu=cpu_millis(cpu) if cpu is not None else 0,
            memory=memory_bytes(memory) if memory is not None else 0,
        )

    def __add__(self, other: Resources) -> Resources:  # type: ignore[override]
        return Resources(self.cpu + other.cpu, self.memory + other.memory)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory)

    def max(self, other: Resources) -> Resources:
        """The per-resource maximum: the amount that covers both."""
        return Resources(max(self.cpu, other.cpu), max(self.memory, other.memory))

    def clamp_non_negative(self) -> Resources:
        return Resources(max(0, self.cpu), max(0, self.memory))

    def fits_in(self, available: Resources) -> bool:
        """True when every resource of self is at most the same resource of available."""
        return self.cpu <= available.cpu and self.memory <= available.memory

    def is_zero(self) -> bool:
        return self.cpu == 0 and self.memory == 0

    def to_quantities(self) -> dict[str, str]:
        """The API form: {'cpu': '3800m', 'memory': '268435456'}."""
        return {"cpu": f"{self.cpu}m", "memory": str(self.memory)}


ZERO = Resources()


def total(amounts: Iterable[Resources]) -> Resources:
    """The sum of amounts, ZERO for none."""
    cpu = memory = 0
    for amount in amounts:
        cpu += amount.cpu
        memory += amount.memory
    return Resources(cpu, memory)

