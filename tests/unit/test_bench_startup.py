"""The reference's start as the bench measures it: its bytecode compiled before it runs, and the offline start's phases."""

from __future__ import annotations

import gc
import importlib.util
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import offline_startup
from bench.schedulers import compile_bytecode

pytestmark = pytest.mark.unit


def test_the_bytecode_is_written_even_where_imports_write_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "pkg"
    (package / "core").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "core" / "decide.py").write_text("ANSWER = 42\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # what PYTHONDONTWRITEBYTECODE sets
    assert compile_bytecode(package)
    assert Path(importlib.util.cache_from_source(str(package / "core" / "decide.py"))).is_file()


def test_a_phase_table_shows_each_trees_median_and_range_in_ms() -> None:
    runs = {
        "/trees/before": [{"import": 0.4, "first lists": 0.05}, {"import": 0.3, "first lists": 0.05}, {"import": 0.35, "first lists": 0.06}],
        "/trees/after": [{"import": 0.25, "first lists": 0.05}],
    }
    table = offline_startup.phase_table(runs).splitlines()
    assert table[0] == "| phase, ms of CPU | before | after |"
    assert "| import | 350 (300–400) | 250 (250–250) |" in table
    assert table[-1] == "| total | 410 (350–450) | 300 (300–300) |"


@pytest.fixture
def _process_as_it_was() -> Iterator[None]:
    """A start replaces the root logger's handlers and freezes the heap: both are put back for the tests after it."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    gc.unfreeze()


@pytest.mark.usefixtures("_process_as_it_was")
def test_one_offline_start_times_every_phase() -> None:
    phases = offline_startup.start_once(nodes=5)
    assert set(phases) == set(offline_startup.PHASES)
    assert phases["import"] > 0 and phases["first lists"] > 0
