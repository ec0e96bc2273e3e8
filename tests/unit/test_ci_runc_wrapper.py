"""The CI runtime wrapper (.ci/runc-drop-capability): which OCI files it edits, and how."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from harness.cluster.paths import REPO_ROOT

pytestmark = pytest.mark.unit


def _wrapper() -> ModuleType:
    path = REPO_ROOT / ".ci" / "runc-drop-capability"
    loader = importlib.machinery.SourceFileLoader("runc_drop_capability", str(path))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


DROP = frozenset({"CAP_SYS_RESOURCE"})


def test_only_the_dropped_capability_leaves_every_set() -> None:
    caps = {key: ["CAP_KILL", "CAP_SYS_RESOURCE", "CAP_SYS_ADMIN"] for key in ("bounding", "effective", "permitted")}
    caps["ambient"] = ["CAP_KILL"]
    assert _wrapper().drop_capabilities(caps, DROP) is True
    assert caps["bounding"] == caps["effective"] == caps["permitted"] == ["CAP_KILL", "CAP_SYS_ADMIN"]
    assert caps["ambient"] == ["CAP_KILL"]
    assert _wrapper().drop_capabilities(caps, DROP) is False  # nothing left to drop


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--root", "/r", "create", "--bundle", "/b", "id"], [("/b/config.json", ("process", "capabilities"))]),
        (["run", "-b", "/b", "id"], [("/b/config.json", ("process", "capabilities"))]),
        (["create", "--bundle=/b", "id"], [("/b/config.json", ("process", "capabilities"))]),
        (["exec", "--process", "/tmp/p.json", "--detach", "id"], [("/tmp/p.json", ("capabilities",))]),
        (["exec", "-p", "/tmp/p.json", "id"], [("/tmp/p.json", ("capabilities",))]),
        (["start", "id"], []),
        (["delete", "--force", "id"], []),
    ],
    ids=["create-bundle", "run-short-flag", "bundle-equals", "exec-process", "exec-short-flag", "start", "delete"],
)
def test_spec_files_follow_runcs_command_line(argv: list[str], expected: list[tuple[str, tuple[str, ...]]]) -> None:
    assert [(str(p), where) for p, where in _wrapper().spec_files(argv)] == expected


def test_bundle_config_and_exec_process_are_rewritten_in_place(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"ociVersion": "1.2.0", "process": {"capabilities": {"bounding": ["CAP_SYS_RESOURCE", "CAP_NET_ADMIN"]}}}))
    process = tmp_path / "process.json"
    process.write_text(json.dumps({"args": ["sh"], "capabilities": {"effective": ["CAP_SYS_RESOURCE"]}}))
    wrapper = _wrapper()
    wrapper.edit_spec(config, ("process", "capabilities"), DROP)
    wrapper.edit_spec(process, ("capabilities",), DROP)
    assert json.loads(config.read_text()) == {"ociVersion": "1.2.0", "process": {"capabilities": {"bounding": ["CAP_NET_ADMIN"]}}}
    assert json.loads(process.read_text()) == {"args": ["sh"], "capabilities": {"effective": []}}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "process.json"]  # no temporary left behind


def test_a_spec_without_the_capability_is_left_byte_for_byte(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    original = '{"process": {"capabilities": {"bounding": ["CAP_KILL"]}}}'
    config.write_text(original)
    _wrapper().edit_spec(config, ("process", "capabilities"), DROP)
    assert config.read_text() == original
