"""rescon audit --list-rules: every rule of the suite's monitor, once, by the suite's name, saying how it runs without a scenario."""

from __future__ import annotations

import pytest

from harness.audit.cli import run_audit
from harness.audit.rule_list import AUDITED_RULES, RULE_NAMES, Mode, describe_rules
from harness.cli import build_parser
from harness.monitor import invariants

pytestmark = pytest.mark.unit


def monitor_rule_names() -> set[str]:
    """The rule names harness.monitor.invariants declares: its UPPER_CASE constants whose values are kebab-case words."""
    return {
        value for name, value in vars(invariants).items()
        if name.isupper() and isinstance(value, str) and value.replace("-", "").isalpha() and value.islower() and "-" in value
    }


def test_every_monitor_rule_is_listed_once_by_its_suite_name() -> None:
    assert len(RULE_NAMES) == len(set(RULE_NAMES))
    assert set(RULE_NAMES) == monitor_rule_names()
    assert len(RULE_NAMES) == 20


def test_each_rule_says_how_it_runs_without_a_scenario() -> None:
    for rule in AUDITED_RULES:
        assert rule.mode in (Mode.STATE, Mode.TRANSITION)
        assert len(rule.without_scenario) > 20, rule.name


def test_list_rules_prints_one_line_per_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_audit(build_parser().parse_args(["audit", "--list-rules"])) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == describe_rules()
    assert [line.split()[0] for line in lines] == list(RULE_NAMES)


def test_audit_without_scheduler_name_is_refused_with_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_audit(build_parser().parse_args(["audit"])) == 2
    assert "--scheduler-name is required" in capsys.readouterr().err
