"""`rescon conformance [pytest options]`: the installed scenarios, run from any directory.

A scheduler's own repository installs the wheel and runs the suite from its
checkout, as Gateway API's implementers run theirs. The command line is the
one `make e2e` runs, around the user's options:

- the scenarios and fixtures come from the suite root (harness.cluster.paths:
  the wheel's bundle, or the clone), and so do the pytest settings
  (`-c <suite root>/pyproject.toml`: markers, addopts), never the settings of the
  directory it runs in, whose pyproject.toml belongs to another project;
- what a run writes lands under the working directory: the pytest cache (for
  `--last-failed`) and, unless the options name other places, the
  ConformanceReport and the JUnit XML in reports/;
- every scenario is bounded by pytest-timeout's `--timeout`, as in `make e2e`.

Select scenarios with `-k`; every option of the suite (`--scheduler`,
`--scheduler-cmd`, `--cluster`, `--exempt-features`, ...) passes through.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from harness.errors import HarnessError

#: The per-scenario bound `make e2e` gives pytest-timeout, in seconds.
SCENARIO_TIMEOUT_SECONDS = 900
#: Where reports go, under the working directory, unless the options say otherwise.
REPORTS_DIR = "reports"


def has_option(args: Sequence[str], *names: str) -> bool:
    """has_option(['--timeout=60'], '--timeout') and has_option(['--timeout', '60'], '--timeout') are True."""
    return any(arg == name or arg.startswith(f"{name}=") for arg in args for name in names)


def scenarios_dir(suite_root: Path) -> Path:
    """scenarios_dir() is <suite root>/tests/conformance, or fails naming the fix when the install lacks it."""
    directory = suite_root / "tests" / "conformance"
    if not directory.is_dir() or not (suite_root / "pyproject.toml").is_file():
        raise HarnessError(
            f"no scenarios in {suite_root}: install reservation-conformance from a wheel built from the repository "
            "(pip wheel <clone> --no-deps; its build ships tests/conformance/ and fixtures/pipelines/), or run from a clone"
        )
    return directory


def pytest_args(user_args: Sequence[str], *, suite_root: Path, cwd: Path, bounded: bool = True) -> list[str]:
    """pytest_args() is the pytest command line of `rescon conformance ARGS`.

    Example: pytest_args(['-k', 'colocation'], suite_root=S, cwd=C) ==
    ['-c', 'S/pyproject.toml', '--rootdir', 'S', '-o', 'cache_dir=C/.pytest_cache',
     '--timeout=900', '--report-output', 'C/reports/conformance-report.yaml',
     '--junitxml', 'C/reports/junit.xml', '-k', 'colocation', 'S/tests/conformance'].
    `bounded` is False when pytest-timeout is not installed (then no --timeout is added).
    """
    directory = scenarios_dir(suite_root)
    args = ["-c", str(suite_root / "pyproject.toml"), "--rootdir", str(suite_root), "-o", f"cache_dir={cwd / '.pytest_cache'}"]
    if bounded and not has_option(user_args, "--timeout"):
        args.append(f"--timeout={SCENARIO_TIMEOUT_SECONDS}")
    if not has_option(user_args, "--report-output"):
        args += ["--report-output", str(cwd / REPORTS_DIR / "conformance-report.yaml")]
    if not has_option(user_args, "--junitxml", "--junit-xml"):
        args += ["--junitxml", str(cwd / REPORTS_DIR / "junit.xml")]
    return [*args, *user_args, str(directory)]


def run(user_args: Sequence[str]) -> int:
    """run() replaces this process with pytest running the scenarios; it returns only when it cannot.

    A fresh interpreter rather than pytest.main(): pytest rewrites the
    plugin's asserts as it imports them, which it cannot do for the harness
    modules this command has already imported. pytest's exit code is the command's.
    """
    import importlib.util
    import os
    import sys

    from harness.cluster.paths import SUITE_ROOT

    bounded = importlib.util.find_spec("pytest_timeout") is not None
    # -P: the working directory (the user's repository) is not put on sys.path, so nothing there shadows the suite.
    argv = [sys.executable, "-P", "-m", "pytest", *pytest_args(user_args, suite_root=SUITE_ROOT, cwd=Path.cwd(), bounded=bounded)]
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)
