"""allure_results: every replayed run as an Allure test result, with its timeline picture, for `make report`'s reader.

Written with allure-python-commons' file logger, as allure-pytest writes the
scenarios' results: `allure generate` reads both alike. One result per run
(its verdict, its problems as the message, its notes, its origin), labelled
suite `rescon replay`; the picture (harness.replay.pictures) is attached.

    write_allure_results(results, Path("reports/replay-allure-results"), pictures={"go-ci-main-c1": Path("/tmp/x/go-ci-main-c1.svg")})
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Mapping, Sequence

from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import Attachment, Label, Status, StatusDetails, TestResult
from allure_commons.types import AttachmentType

from harness.replay.judging import RunResult
from harness.report.outcomes import Outcome

#: The suite label every replayed run carries in Allure.
SUITE = "rescon replay"

_STATUS = {
    Outcome.PASSED: Status.PASSED,
    Outcome.FAILED: Status.FAILED,
    Outcome.ERROR: Status.BROKEN,
    Outcome.SKIPPED: Status.SKIPPED,
    Outcome.FLAKY: Status.PASSED,
}


def allure_result(result: RunResult, *, stop_ms: int, attachments: Sequence[Attachment] = ()) -> TestResult:
    """allure_result() is one run's TestResult: its verdict, problems as the message, notes as the description.

    The history id is the run's name and origin, so Allure's history follows a run from replay to replay.
    """
    message = "\n".join(result.problems) or None
    description = "\n".join([f"from {result.origin}", *result.notes])
    return TestResult(
        uuid=str(uuid.uuid4()),
        historyId=hashlib.md5(f"{result.origin}:{result.name}".encode()).hexdigest(),  # noqa: S324 - an id, not a secret
        name=result.name,
        fullName=f"replay.{result.name}",
        status=_STATUS[result.outcome],
        statusDetails=StatusDetails(message=message) if message else None,
        description=description,
        start=stop_ms - int(result.seconds * 1000),
        stop=stop_ms,
        labels=[Label(name="suite", value=SUITE), Label(name="framework", value="rescon")],
        attachments=list(attachments),
    )


def write_allure_results(results: Sequence[RunResult], out_dir: Path, *, pictures: Mapping[str, Path], stop_ms: int) -> int:
    """write_allure_results() writes one result per run (and its picture, when drawn) into out_dir; returns how many."""
    out_dir.mkdir(parents=True, exist_ok=True)
    logger = AllureFileLogger(str(out_dir))  # type: ignore[no-untyped-call]
    for result in results:
        attachments = []
        picture = pictures.get(result.name)
        if picture is not None and picture.is_file():
            source = f"{uuid.uuid4()}-attachment.{AttachmentType.SVG.extension}"
            logger.report_attached_file(str(picture), source)  # type: ignore[no-untyped-call]
            attachments.append(Attachment(name="timeline", source=source, type=AttachmentType.SVG.mime_type))
        logger.report_result(allure_result(result, stop_ms=stop_ms, attachments=attachments))  # type: ignore[no-untyped-call]
    return len(results)
