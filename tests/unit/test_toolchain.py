"""The toolchain's pure parts: Go version checks, pins, cache keys, and never trusting a partial build."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.cluster import toolchain
from harness.cluster.toolchain import PROGRAMS, Program, binary_path, parse_go_version, program_named, recipe_key
from harness.errors import HarnessError

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("text, expected", [("go1.26.8", (1, 26)), ("go1.27", (1, 27)), ("go2.0.1", (2, 0))])
def test_parse_go_version_accepts_new_enough(text: str, expected: tuple[int, int]) -> None:
    assert parse_go_version(text) == expected


@pytest.mark.parametrize("text", ["go1.22.1", "go1.25.9"])
def test_parse_go_version_rejects_old_go_naming_the_fix(text: str) -> None:
    with pytest.raises(HarnessError, match=r"too old.*install a newer Go"):
        parse_go_version(text)


def test_parse_go_version_rejects_garbage() -> None:
    with pytest.raises(HarnessError, match="cannot read the Go version"):
        parse_go_version("devel +abc")


def test_every_program_has_a_pinned_version() -> None:
    versions = {p.name: p.version() for p in PROGRAMS}
    assert versions["kube-apiserver"] == "v1.37.2"
    assert versions["kwok"] == "v0.8.0"
    assert versions["tekton-controller"] == "v1.15.0"
    assert versions["etcd"].startswith(("v3.6.", "v3.7."))


def test_kubernetes_programs_are_version_stamped() -> None:
    flags = program_named("kube-apiserver").ldflags()
    assert "-X k8s.io/component-base/version.gitVersion=v1.37.2" in flags
    assert "gitMajor=1" in flags and "gitMinor=37" in flags
    assert "gitVersion" not in program_named("etcd").ldflags()


def test_unknown_program_names_the_choices() -> None:
    with pytest.raises(HarnessError, match="choose one of etcd"):
        program_named("kubelet")


def _copy_module(tmp_path: Path, program: Program) -> Program:
    module = tmp_path / program.module_dir
    module.mkdir()
    for name in ("go.mod", "go.sum"):
        (module / name).write_bytes((program.module_path / name).read_bytes())
    return program


def test_cache_key_changes_when_a_pin_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = _copy_module(tmp_path, program_named("kwok"))
    monkeypatch.setattr(toolchain, "TOOLS_DIR", tmp_path)
    before = recipe_key(program, (1, 26))
    assert before.startswith("v0.8.0-")
    assert recipe_key(program, (1, 26)) == before
    assert recipe_key(program, (1, 27)) != before
    gomod = tmp_path / "kwok" / "go.mod"
    gomod.write_text(gomod.read_text() + "\n// changed\n")
    assert recipe_key(program, (1, 26)) != before


def test_cache_lives_in_the_per_user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    path = binary_path(program_named("kubectl"), (1, 26))
    assert path.is_relative_to(tmp_path / "bin")
    assert path.name == "kubectl"
    assert path.parent.name.startswith("kubectl-v1.37.2-")


def test_a_partial_build_is_never_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A build that dies leaves no binary at the final path; the next run rebuilds it."""
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path))
    fake_go = tmp_path / "go"
    # A 'go' that reports a version, then fails every build after writing half a file.
    fake_go.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = env ]; then echo go1.26.8; exit 0; fi\n'
        'while [ "$1" != "-o" ]; do shift; done; echo half > "$2"; echo "link: out of memory" >&2; exit 2\n'
    )
    fake_go.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    chain = toolchain.Toolchain(out=open("/dev/null", "w"))
    with pytest.raises(HarnessError, match=r"building etcd failed .*make tools"):
        chain.ensure(["etcd"])
    final = chain.path("etcd")
    assert not final.exists()
    assert list(final.parent.glob(".etcd.partial-*")) == []
    assert "out of memory" in (final.parent / "build.log").read_text()


def test_missing_go_names_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HarnessError, match=r"'go' is not on PATH: install Go >= 1.26"):
        toolchain.find_go()


def test_programs_are_unique() -> None:
    names = [p.name for p in PROGRAMS]
    assert len(names) == len(set(names))
    assert all(dataclasses.is_dataclass(p) for p in PROGRAMS)


def _fake_go_that_builds(tmp_path: Path) -> Path:
    """A 'go' that reports a version and 'builds' a script answering --version."""
    fake_go = tmp_path / "go"
    fake_go.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = env ]; then echo go1.26.8; exit 0; fi\n'
        'while [ "$1" != "-o" ]; do shift; done\n'
        'printf \'#!/bin/sh\\necho fresh\\n\' > "$2"; chmod +x "$2"\n'
    )
    fake_go.chmod(0o755)
    return fake_go


def test_a_partial_file_left_by_a_killed_build_is_ignored_and_rebuilt(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A build killed before its rename leaves `.etcd.partial-<pid>`: it is never used, and the next run replaces it."""
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path / "cache"))
    _fake_go_that_builds(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    chain = toolchain.Toolchain(out=open("/dev/null", "w"))
    final = chain.path("etcd")
    final.parent.mkdir(parents=True)
    stale = final.with_name(".etcd.partial-99999")
    stale.write_text("half a binary")
    assert [p.name for p in chain.missing()].count("etcd") == 1  # a partial file does not count as built

    built = chain.ensure(["etcd"])

    assert built == {"etcd": final}
    assert "fresh" in final.read_text()
    assert not stale.exists()


def test_an_entry_for_an_old_pin_is_ignored_and_a_new_one_built(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Changing a pin changes the cache key: the old entry stays where it was, unused, and the new pin is built."""
    monkeypatch.setenv("RESCON_CACHE_DIR", str(tmp_path / "cache"))
    _fake_go_that_builds(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    modules = tmp_path / "tools"
    modules.mkdir()
    _copy_module(modules, program_named("kwok"))
    monkeypatch.setattr(toolchain, "TOOLS_DIR", modules)
    chain = toolchain.Toolchain(out=open("/dev/null", "w"))
    old = chain.ensure(["kwok"])["kwok"]
    old.write_text("#!/bin/sh\necho stale\n")  # mark the old entry

    gomod = modules / "kwok" / "go.mod"
    gomod.write_text(gomod.read_text() + "\n// a new pin\n")
    new = chain.ensure(["kwok"])["kwok"]

    assert new != old
    assert "fresh" in new.read_text()
    assert "stale" in old.read_text()


def test_an_install_without_the_pinning_modules_says_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(toolchain, "TOOLS_DIR", tmp_path / "tools")
    with pytest.raises(HarnessError, match="go.mod is missing: install reservation-conformance from a wheel built from the repository"):
        recipe_key(program_named("etcd"), (1, 26))


def test_the_cache_key_does_not_depend_on_where_the_pins_lie(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An installed wheel's copy of tools/ finds the binaries a clone built: same bytes, same key."""
    import shutil

    here = recipe_key(program_named("kwok"), (1, 26))
    shutil.copytree(toolchain.TOOLS_DIR, tmp_path / "tools")
    monkeypatch.setattr(toolchain, "TOOLS_DIR", tmp_path / "tools")
    assert recipe_key(program_named("kwok"), (1, 26)) == here
