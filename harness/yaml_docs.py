"""YAML documents read and written through libyaml when PyYAML was built with it.

The suite reads every fixture it renders and writes every object it reports
(the final objects of each scenario); PyYAML's pure-Python loader and dumper
took several per cent of a pytest worker's CPU. The C ones give the same
documents: safe types only, keys in the order given.
"""

from __future__ import annotations

from typing import Any

import yaml

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def load_all(text: str) -> list[Any]:
    """load_all(text) is every document of text, as yaml.safe_load_all reads them."""
    return list(yaml.load_all(text, Loader=_Loader))


def dump_all(docs: list[Any]) -> str:
    """dump_all(docs) is docs as YAML documents, as yaml.safe_dump_all(docs, sort_keys=False) writes them."""
    return yaml.dump_all(docs, Dumper=_Dumper, sort_keys=False)
