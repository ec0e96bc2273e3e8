"""cli: `rescon replay`, your own Tekton YAML run against the scheduler under test and judged run by run (docs/replay.md).

    rescon replay tekton/ [--nodes nodes.yaml | --pool 4x4cpu8Gi] [--copies 3] [--repeat 5]
                  [--scheduler command --scheduler-cmd '...'] [--cluster kind]

stdout: what each run cannot simulate, then one line per run (verdict, wall
time, violations), then the counts and where the reports went; stderr: the
progress. Exit code 0 when every run passed, 1 when one failed or had no
verdict, 2 for bad input (one line naming the fix, before any cluster is
touched when it can be).
"""

from __future__ import annotations

import argparse
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cluster import tekton
from harness.cluster.namespaces import unique_name
from harness.replay.allure_results import write_allure_results
from harness.replay.bad_input import ReplayInputError
from harness.replay.junit import junit_xml
from harness.replay.options import DEFAULT_POOL, check_counts, suite_config
from harness.replay.output import plan_line, result_line, summary_line
from harness.replay.prepare import Prepared, prepare
from harness.replay.report import replay_report
from harness.replay.session import Replayed, replay_on_cluster
from harness.report.conformance_report import Implementation, Mode, SuiteInfo, write_report
from harness.suite.features import Feature
from harness.suite.reporting import SUITE_VERSION

if TYPE_CHECKING:
    from harness.plugin import SuiteConfig

#: Exit codes.
PASSED, FAILED, BAD_INPUT = 0, 1, 2


def _out(line: str) -> None:
    print(line, flush=True)


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _say_plan(prepared: Prepared, *, copies: int, rounds: int, cluster: str) -> None:
    plan = prepared.plan
    for line in plan.skipped:
        _out(line)
    for run in plan.runs:
        _out(plan_line(run))
    total = len(plan.runs) * copies * rounds
    _progress(
        f"replay: {len(plan.runs)} runs x {copies} copies x {rounds} rounds = {total} PipelineRuns on {len(prepared.nodes)} nodes "
        f"({cluster}), namespace {plan.namespace}"
    )


def _write_reports(args: argparse.Namespace, config: SuiteConfig, replayed: Replayed, wall: float) -> list[str]:
    mode = Mode.RESERVATION_STATE if Feature.RESERVATION_RECORDS in config.supported else Mode.PLACEMENT_ONLY
    report = replay_report(
        replayed.results,
        implementation=Implementation(scheduler_name=config.scheduler_name, **config.implementation),
        suite=SuiteInfo(SUITE_VERSION, replayed.kubernetes_version, tekton.version(), config.cluster, config.coschedule),
        mode=mode, supported_features=sorted(f.value for f in config.supported), wall_time=wall, latencies=replayed.latencies,
    )
    written = write_report(report, args.report_output)
    args.junit_xml.parent.mkdir(parents=True, exist_ok=True)
    args.junit_xml.write_text(junit_xml(replayed.results, seconds=wall), encoding="utf-8")
    shutil.rmtree(args.alluredir, ignore_errors=True)  # the last replay's results would read as this one's
    write_allure_results(replayed.results, args.alluredir, pictures=replayed.pictures, stop_ms=int(time.time() * 1000))
    drawn = f", {len(replayed.pictures)} timeline pictures" if replayed.pictures else ""
    return [
        f"ConformanceReport: {written}", f"JUnit XML: {args.junit_xml}",
        f"Allure results: {args.alluredir}{drawn} (make report ALLURE_RESULTS={args.alluredir})",
    ]


def _not_a_violation(record: logging.LogRecord) -> bool:
    """_not_a_violation() drops the monitor's own line for each violation: the round prints each once, among its progress lines."""
    return not (record.name == "rescon.monitor" and record.getMessage().startswith("contract monitor: "))


def run_replay(args: argparse.Namespace) -> int:
    """run_replay() is `rescon replay`: 0 when every run passed, 1 otherwise, 2 for bad input."""
    started = time.monotonic()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="rescon replay: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_not_a_violation)
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    try:
        check_counts(args)
        config = suite_config(args)
        prepared = prepare(
            paths=args.paths, nodes_file=args.nodes, pool=args.pool or DEFAULT_POOL, copies=args.copies, rounds=args.repeat,
            run_for=args.run_for, scheduler_name=config.scheduler_name, cluster=config.cluster, namespace=unique_name("replay", "run"),
        )
        _say_plan(prepared, copies=args.copies, rounds=args.repeat, cluster=config.cluster)
        with tempfile.TemporaryDirectory(prefix="rescon-replay-pictures-") as pictures:
            replayed = replay_on_cluster(prepared, config, say=_progress, pictures_dir=Path(pictures))
            wall = time.monotonic() - started
            written = _write_reports(args, config, replayed, wall)  # while the pictures are there to copy
    except ReplayInputError as err:
        print(f"rescon replay: error: {err}", file=sys.stderr, flush=True)
        return BAD_INPUT
    for result in replayed.results:
        _out(result_line(result))
    _out(summary_line(replayed.results, wall))
    for line in written:
        _out(line)
    return PASSED if all(r.outcome.value == "passed" for r in replayed.results) else FAILED
