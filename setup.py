"""The build hook that ships the suite's repository files inside the wheel.

The scenarios (tests/conformance/) and their fixtures (fixtures/pipelines/) stay
where contributors expect them, at the top of the repository, and so do the Go
modules that pin the local cluster's programs (tools/), kind's node layout
(kind-config.yaml) and the pytest settings (pyproject.toml). A package-dir
mapping cannot carry them: the scenarios are plain test modules, not a package,
and kind-config.yaml sits at the root. So build_py copies them, laid out as in
the repository, to harness/_suite/ in the wheel, where harness.cluster.paths
finds them (SUITE_ROOT). An editable install builds nothing: the checkout is
the suite root there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: What the wheel carries under harness/_suite/, as (repository path, glob patterns of the files kept).
BUNDLED = (
    ("tests/conformance", ("*.py", "scenario_seconds.json")),
    ("fixtures/pipelines", ("*.j2",)),
    ("tools", ("go.mod", "go.sum", "*.go")),
    (".", ("kind-config.yaml", "pyproject.toml")),
)
BUNDLE = Path("harness") / "_suite"


class BuildPyWithSuite(build_py):
    """build_py, then the suite's files; the bundle is rebuilt whole, so a deleted scenario never lingers in build/."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / BUNDLE
        shutil.rmtree(target, ignore_errors=True)
        for directory, patterns in BUNDLED:
            source = ROOT / directory
            recurse = directory != "."
            for pattern in patterns:
                for path in sorted(source.rglob(pattern) if recurse else source.glob(pattern)):
                    if "__pycache__" in path.parts or not path.is_file():
                        continue
                    destination = target / path.relative_to(ROOT)
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, destination)


setup(cmdclass={"build_py": BuildPyWithSuite})
