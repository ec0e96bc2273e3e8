"""Label selectors (``metav1.LabelSelector``) as the API server and kube-scheduler read them.

Pod affinity terms, their namespace selectors and topology spread constraints
all select pods (or namespaces) by a LabelSelector. kube-scheduler turns each
into a ``labels.Selector`` once (``metav1.LabelSelectorAsSelector``) and then
matches it against many label sets; ``LabelSelector`` here is that parsed form,
built once per attempt and matched against every placed pod.

The three shapes that matter, and why they differ:

* an absent (null) selector selects **nothing** (``labels.Nothing()``);
* an empty selector ``{}`` selects **everything** (``labels.Everything()``);
* otherwise ``matchLabels`` (each an equality) and ``matchExpressions``
  (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``) are ANDed.

A requirement the API server would refuse (an unknown operator, ``In`` with no
value, ``Exists`` with one) makes the whole selector select nothing: such a
selector can only come from an object the API never admitted, and selecting
nothing is the reading that never places a pod by mistake (node_checks reads a
node selector's invalid entries the same way).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: (key, operator, values): one requirement, values as a frozenset (empty for Exists and DoesNotExist).
Requirement = tuple[str, str, frozenset[str]]

_VALUED = ("In", "NotIn")
_UNVALUED = ("Exists", "DoesNotExist")


@dataclass(frozen=True)
class LabelSelector:
    """LabelSelector is a parsed ``metav1.LabelSelector``: requirements ANDed, or nothing at all.

    ``nothing`` is True for a null (or invalid) selector, which matches no
    label set; an empty ``requirements`` with ``nothing`` False is the empty
    selector, which matches every label set. ``matchLabels`` entries become
    ``In`` requirements with one value (the same test as Go's ``=``).

    Example::

        >>> selector = parse_label_selector({"matchLabels": {"app": "web"},
        ...     "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]})
        >>> selector.matches({"app": "web"}), selector.matches({"app": "web", "tier": "db"})
        (True, False)
        >>> parse_label_selector(None).matches({}), parse_label_selector({}).matches({})
        (False, True)
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def empty(self) -> bool:
        """empty is Go's ``Selector.Empty()``: the selector selects everything (``{}``), not nothing."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, Any] | None) -> bool:
        """matches(labels) is True when every requirement holds for the label set (a null label set is empty)."""
        if self.nothing:
            return False
        found = labels if labels is not None else {}
        for key, operator, values in self.requirements:
            present = key in found
            if operator == "In":
                if not present or str(found[key]) not in values:
                    return False
            elif operator == "NotIn":
                if present and str(found[key]) in values:
                    return False
            elif operator == "Exists":
                if not present:
                    return False
            elif present:  # DoesNotExist
                return False
        return True

    def with_requirements(self, extra: tuple[Requirement, ...]) -> LabelSelector:
        """with_requirements(extra) ANDs more requirements in; a selector of nothing stays nothing.

        Example: ``parse_label_selector({}).with_requirements((("app", "In", frozenset({"web"})),))``
        selects only pods labelled ``app=web``.
        """
        if self.nothing or not extra:
            return self
        return LabelSelector(self.requirements + extra)


NOTHING = LabelSelector(nothing=True)
"""NOTHING selects no label set: a null selector."""

EVERYTHING = LabelSelector()
"""EVERYTHING selects every label set: the empty selector ``{}``."""


def _requirement(expression: Any) -> Requirement | None:
    if not isinstance(expression, Mapping):
        return None
    key, operator = expression.get("key"), expression.get("operator")
    raw = expression.get("values")
    values = frozenset(str(v) for v in raw) if isinstance(raw, list) else frozenset()
    if not isinstance(key, str) or not key:
        return None
    if operator in _VALUED and values:
        return (key, str(operator), values)
    if operator in _UNVALUED and not values:
        return (key, str(operator), values)
    return None


def parse_label_selector(selector: Any) -> LabelSelector:
    """parse_label_selector reads a raw ``metav1.LabelSelector`` as ``metav1.LabelSelectorAsSelector`` does.

    Null (or not a mapping) is NOTHING; ``{}`` is EVERYTHING; an invalid
    requirement makes the whole selector NOTHING (see the module docstring).

    Example: ``parse_label_selector({"matchExpressions": [{"key": "app", "operator": "Exists"}]})``
    is ``LabelSelector((("app", "Exists", frozenset()),))``; the same with
    ``"values": ["x"]`` is NOTHING, as the API server would refuse it.
    """
    if not isinstance(selector, Mapping):
        return NOTHING
    requirements: list[Requirement] = []
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        for key in sorted(match_labels):
            requirements.append((str(key), "In", frozenset({str(match_labels[key])})))
    elif match_labels is not None:
        return NOTHING
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        for expression in expressions:
            requirement = _requirement(expression)
            if requirement is None:
                return NOTHING
            requirements.append(requirement)
    elif expressions is not None:
        return NOTHING
    return LabelSelector(tuple(requirements))


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """labels_of(obj) is ``metadata.labels`` of a raw object, or an empty mapping.

    Example: ``labels_of({"metadata": {"labels": {"app": "web"}}}) == {"app": "web"}``;
    ``labels_of({"metadata": {}}) == {}``.
    """
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}
