"""allure_metadata: the three files that make an Allure report readable on its own.

Allure reads them from the results folder beside the test results:

- ``environment.properties``: what was tested, against what (the report's
  Environment widget): suite, Kubernetes and Tekton versions, the scheduler and
  how it was launched, the cluster, the checking mode, Tekton's coschedule mode;
- ``categories.json``: failures sorted by kind, matched on the status and the
  status message that allure-pytest records (``<exception class>: <message>``,
  the class qualified by its module unless it is a builtin). The messages are
  the harness's own: the contract monitor's ``contract monitor: <rule> at ...``,
  wait_for's ``timed out after ...``, hold_for's ``... stopped holding after ...``,
  and the classes of harness.errors and the scheduler under test;
- ``executor.json``: who ran it (the report's Executor widget and title).

Allure matches each category's ``messageRegex`` against the whole message,
with DOTALL (``Pattern.matches``), and files a result under every category it
matches, so the categories below are written not to overlap.

Example::

    write_allure_metadata(Path("reports/allure-results"), environment={"suite.version": "0.1.0"},
                          categories=CATEGORIES, executor=executor_info(...))
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.monitor import invariants as rules

#: The monitor's rules about where pods are bound: they hold for every implementation.
PLACEMENT_RULES: tuple[str, ...] = rules.PLACEMENT_RULES
#: The monitor's rules about ReservationRecords (implementations that publish them).
RESERVATION_STATE_RULES: tuple[str, ...] = (
    rules.POD_OFF_CLAIM_NODE,
    rules.BOUND_POD_NOT_HOLDER,
    rules.RECORD_AFTER_BIND,
    rules.CLAIM_CHANGED_NODE,
    rules.CLAIM_GENERATION_STEP,
    rules.RELEASED_NOT_FINAL,
    rules.CLAIM_REWRITTEN,
    rules.RECORD_INVALID,
    rules.GROUPS_DIFFER,
    rules.RECORD_WRONG_RUN,
    rules.SPEC_CHANGED,
    rules.ACTIVE_LABEL_DIVERGED,
    rules.RELEASE_REASON_UNTRUE,
    rules.RELEASE_LATE,
    rules.SCHEDULER_NAME_MISSING,
    rules.GROUP_VOLUME_NODE_CONFLICT,
)

# Class names as allure-pytest writes them (module-qualified; AssertionError is a builtin).
_CONTRACT_BROKEN = r"harness\.monitor\.watcher\.ContractBroken: contract monitor: "
_BROKEN = r"harness\.waits\.Broken: "
_WAIT_TIMEOUT = r"harness\.waits\.WaitTimeout: timed out after "
_SCHEDULER = r"harness\.suite\.scheduler_under_test\.Scheduler(?:FailedToStart|Died): "
#: A scenario body's own assertion about records or groups (checks.group_must_have and the like).
_STATE_ASSERTION = r"AssertionError: (?:record |group |another scheduler's record)"
#: A scenario body's own assertion about where a pod went ("B is on n1, ...", "big ran on n2, not on its group's node n1").
_PLACEMENT_WORDS = r"(?: is on | ran on | landed on | is bound to | went to | opened its claim on |left the group's node)"


def _rules(names: Sequence[str]) -> str:
    return "(?:" + "|".join(re.escape(name) for name in names) + ")"


@dataclass(frozen=True)
class Category:
    """Category is one entry of categories.json: a name, the statuses it takes, and a whole-message regex."""

    name: str
    statuses: tuple[str, ...]
    message_regex: str

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "matchedStatuses": list(self.statuses), "messageRegex": self.message_regex}

    def matches(self, status: str, message: str) -> bool:
        """matches() is Allure's test: the status is one of ours and the regex matches the whole message (DOTALL)."""
        return status in self.statuses and re.fullmatch(self.message_regex, message, re.DOTALL) is not None


PLACEMENT_VIOLATION = Category(
    "Placement violation",
    ("failed",),
    "(?:"
    + _CONTRACT_BROKEN + _rules(PLACEMENT_RULES) + " at "
    + "|" + _BROKEN + r".* staying unbound stopped holding "
    + "|" + r"AssertionError: (?!record |group |another scheduler's record)[^\n]*" + _PLACEMENT_WORDS
    + ").*",
)
RESERVATION_STATE_VIOLATION = Category(
    "Reservation-state violation",
    ("failed",),
    "(?:"
    + _CONTRACT_BROKEN + _rules(RESERVATION_STATE_RULES) + " at "
    + "|" + _BROKEN + r"the group of .* stopped holding "
    + "|" + _STATE_ASSERTION
    + ").*",
)
TIMEOUT = Category(
    "Timeout",
    ("failed",),
    # wait_for's bounded waits, and pytest-timeout's "Failed: Timeout >900.0s" for a whole scenario.
    "(?:" + _WAIT_TIMEOUT + r"|Failed: Timeout ).*",
)
SCHEDULER_ERROR = Category(
    "Scheduler error",
    # SchedulerDied is a verdict (failed); SchedulerFailedToStart, an exit at launch, is no verdict (broken).
    ("failed", "broken"),
    _SCHEDULER + ".*",
)
SETUP_ERROR = Category(
    "Setup error",
    # Broken is what allure-pytest calls an exception that is no AssertionError: a cluster that does
    # not start, a fixture that does not render (HarnessError), an API the suite cannot use.
    ("broken",),
    "(?!" + _SCHEDULER + ").*",
)

#: categories.json, in the order the report lists them.
CATEGORIES: tuple[Category, ...] = (PLACEMENT_VIOLATION, RESERVATION_STATE_VIOLATION, TIMEOUT, SCHEDULER_ERROR, SETUP_ERROR)


def categories_of(status: str, message: str, categories: Sequence[Category] = CATEGORIES) -> list[str]:
    """categories_of('failed', 'harness.waits.WaitTimeout: timed out after 30s ...') == ['Timeout']."""
    return [c.name for c in categories if c.matches(status, message)]


def environment_properties(values: Mapping[str, str]) -> str:
    """environment_properties({'cluster': 'local'}) is ``"cluster=local\\n"``, escaped as java.util.Properties reads it."""

    def escape(text: str, *, key: bool) -> str:
        out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
        out = out.replace("=", "\\=").replace(":", "\\:")
        if key:
            out = out.replace(" ", "\\ ")
            return "\\" + out if out[:1] in ("#", "!") else out
        return "\\" + out if out.startswith(" ") else out

    return "".join(f"{escape(k, key=True)}={escape(v, key=False)}\n" for k, v in values.items())


def executor_info(*, suite_version: str, scheduler_name: str, project: str, cluster: str, mode: str, env: Mapping[str, str]) -> dict[str, Any]:
    """executor_info() is executor.json: the suite as the executor; a GitHub Actions run's link when there is one.

    Example: ``executor_info(suite_version="0.1.0", scheduler_name="tkn-scheduler", project="reference-scheduler",
    cluster="local", mode="reservation-state", env={})["reportName"]`` is
    ``"Reservation conformance: reference-scheduler (tkn-scheduler)"``.
    """
    info: dict[str, Any] = {
        "name": f"reservation-conformance {suite_version}",
        "type": "pytest",
        "buildName": f"{scheduler_name} on {cluster}, {mode}",
        "reportName": f"Reservation conformance: {project} ({scheduler_name})",
    }
    if env.get("GITHUB_ACTIONS") == "true" and env.get("GITHUB_RUN_ID"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        info["buildUrl"] = f"{server}/{env.get('GITHUB_REPOSITORY', '')}/actions/runs/{env['GITHUB_RUN_ID']}"
        info["buildOrder"] = int(env.get("GITHUB_RUN_NUMBER", "0") or 0)
    return info


def write_allure_metadata(
    directory: Path, *, environment: Mapping[str, str], executor: Mapping[str, Any], categories: Sequence[Category] = CATEGORIES
) -> list[Path]:
    """write_allure_metadata() writes environment.properties, categories.json and executor.json; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "environment.properties": environment_properties(environment),
        "categories.json": json.dumps([c.as_json() for c in categories], indent=2) + "\n",
        "executor.json": json.dumps(dict(executor), indent=2) + "\n",
    }
    written = []
    for name, text in files.items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
