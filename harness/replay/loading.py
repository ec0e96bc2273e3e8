"""loading: the files and folders `rescon replay` is given, read into YAML documents that remember where they came from.

A folder is read recursively (its `.yaml` and `.yml` files, hidden folders such
as `.git` left out, in path order); a file is read whatever its name (JSON is
YAML too). A file may hold several documents (`---`), and a document may be a
`kind: List` (what `kubectl get -o yaml` writes), whose items count one by one.

    >>> text = "apiVersion: tekton.dev/v1\\nkind: Task\\n---\\n---\\napiVersion: tekton.dev/v1\\nkind: Pipeline\\n"
    >>> [d.origin for d in documents_of_text(text, "ci.yaml")]
    ['ci.yaml#1', 'ci.yaml#3']
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError

#: The file names a folder is read for.
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Document:
    """Document is one YAML object and where it came from: `origin` is "file#n" (its n-th document), or "file#n.items[i]"."""

    origin: str
    body: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body.get("kind") or "")

    @property
    def api_version(self) -> str:
        return str(self.body.get("apiVersion") or "")

    @property
    def name(self) -> str:
        return str((self.body.get("metadata") or {}).get("name") or "")


def yaml_files(paths: Sequence[Path], *, leave_out: Sequence[Path] = ()) -> list[Path]:
    """yaml_files() is every file to read: each file given, and each folder's YAML files below it, in path order.

    `leave_out` are files a folder may hold that are no Tekton (the --nodes file kept beside the
    pipelines). A path that does not exist, or folders that hold no YAML at all, are refused.
    """
    left_out = {p.resolve() for p in leave_out}
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix in YAML_SUFFIXES and not _hidden(p, path) and p.resolve() not in left_out
            )
        else:
            raise ReplayInputError(bad_input.no_such_path(str(path)))
    if not found:
        raise ReplayInputError(bad_input.no_yaml_found(", ".join(str(p) for p in paths)))
    return found


def _hidden(file: Path, root: Path) -> bool:
    """_hidden() is True for a file below a folder whose name starts with '.' (.git, .github), counted from `root`."""
    return any(part.startswith(".") for part in file.relative_to(root).parts[:-1])


def documents_of_text(text: str, source: str) -> list[Document]:
    """documents_of_text() splits one file's text into its documents; empty documents count in the numbering but are skipped."""
    try:
        loaded = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        raise ReplayInputError(bad_input.unreadable_yaml(source, _first_line(err))) from None
    documents: list[Document] = []
    for number, body in enumerate(loaded, start=1):
        if body is None:
            continue
        documents += list(_objects(body, f"{source}#{number}"))
    return documents


def _objects(body: Any, origin: str) -> Iterator[Document]:
    if not isinstance(body, Mapping) or not body.get("kind") or not body.get("apiVersion"):
        raise ReplayInputError(bad_input.not_an_object(origin))
    if body["kind"] == "List":
        for index, item in enumerate(body.get("items") or []):
            yield from _objects(item, f"{origin}.items[{index}]")
        return
    yield Document(origin, body)


def _first_line(err: yaml.YAMLError) -> str:
    """_first_line() is the parser's complaint and its line: 'mapping values are not allowed here (line 3)'."""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    mark = getattr(err, "problem_mark", None)
    return f"{problem} (line {mark.line + 1})" if mark is not None else str(problem)


def load_documents(paths: Sequence[Path], *, leave_out: Sequence[Path] = ()) -> list[Document]:
    """load_documents() reads every document of every file the paths name, but those of `leave_out` in a folder."""
    documents: list[Document] = []
    for file in yaml_files(paths, leave_out=leave_out):
        documents += documents_of_text(file.read_text(encoding="utf-8"), str(file))
    return documents
