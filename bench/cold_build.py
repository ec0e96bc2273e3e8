"""Cold toolchain build: `rescon tools` with an empty Go build cache and an empty binary cache.

The Go module cache stays (no download is timed, only compiling and linking).
Each progress line is written to the log with a UTC timestamp; the report
reads the per-program durations back from it. Run it niced: it takes about
an hour on 2 cores.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cold_build(log_path: str) -> int:
    log = REPO / log_path
    log.parent.mkdir(parents=True, exist_ok=True)
    gocache = tempfile.mkdtemp(prefix="bench-gocache-")
    bincache = tempfile.mkdtemp(prefix="bench-rescon-cache-")
    env = {**os.environ, "GOCACHE": gocache, "RESCON_CACHE_DIR": bincache}
    started = time.monotonic()
    with log.open("w") as out:
        out.write(f"{_now()} cold build: GOCACHE={gocache} RESCON_CACHE_DIR={bincache} nproc={os.cpu_count()}\n")
        out.flush()
        process = subprocess.Popen(
            ["nice", "-n", "19", str(REPO / ".venv" / "bin" / "rescon"), "tools"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        assert process.stdout is not None
        for line in process.stdout:
            out.write(f"{_now()} {line}")
            out.flush()
        code = process.wait()
        out.write(f"{_now()} exit {code} after {time.monotonic() - started:.0f}s\n")
    shutil.rmtree(gocache, ignore_errors=True)
    shutil.rmtree(bincache, ignore_errors=True)
    return code


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


DONE = re.compile(r"\[(\d+)/(\d+)\] (\S+) (\S+): done in (\S+)")
TOTAL = re.compile(r"toolchain: built (\d+) program\(s\) in (\S+)")


def parse_elapsed(text: str) -> float:
    """parse_elapsed('12m05s') == 725.0; parse_elapsed('48s') == 48.0."""
    match = re.fullmatch(r"(?:(\d+)m)?(\d+)s", text)
    if not match:
        raise ValueError(f"not an elapsed time: {text!r}")
    return int(match.group(1) or 0) * 60 + int(match.group(2))


def parse_log(text: str) -> dict[str, object]:
    """parse_log(log) is {'programs': [(name, version, seconds)], 'total_seconds': s or None, 'finished': bool}."""
    programs = [(m.group(3), m.group(4), parse_elapsed(m.group(5))) for m in DONE.finditer(text)]
    total = TOTAL.search(text)
    return {
        "programs": programs,
        "total_seconds": parse_elapsed(total.group(2)) if total else None,
        "finished": bool(re.search(r" exit 0 after", text)),
    }
