"""Where the harness keeps its files: the per-user tool cache and cluster state.

The tool cache is per user and outside the checkout, so every clone (and CI on
the same machine) reuses binaries that took many minutes to build.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The harness package's directory: <checkout>/harness, or <site-packages>/harness in an installed wheel.
PACKAGE_DIR = Path(__file__).resolve().parents[1]

#: Where the wheel's build hook (setup.py) puts the repository files the suite needs, laid out as in the repository.
BUNDLE_NAME = "_suite"

#: The directory above the package: the checkout when run from a clone (or an editable install).
REPO_ROOT = PACKAGE_DIR.parent


def suite_root(package_dir: Path = PACKAGE_DIR) -> Path:
    """suite_root() is the directory laid out as the repository: tests/conformance/, fixtures/pipelines/, tools/, kind-config.yaml, pyproject.toml.

    An installed wheel carries them in harness/_suite/; a clone (or an
    editable install, which copies nothing) has them around the package.
    """
    bundle = package_dir / BUNDLE_NAME
    return bundle if bundle.is_dir() else package_dir.parent


#: The suite's files: the scenarios, their fixtures, the Go modules that pin the local cluster's programs, kind's config.
SUITE_ROOT = suite_root()


def is_checkout(root: Path = REPO_ROOT) -> bool:
    """is_checkout() is True in a clone of the repository (its pyproject.toml beside the package), False in site-packages."""
    return (root / "pyproject.toml").is_file() and (root / "reference_scheduler").is_dir()


def cache_root() -> Path:
    """cache_root() is $RESCON_CACHE_DIR, else $XDG_CACHE_HOME/reservation-conformance, else ~/.cache/…"""
    explicit = os.environ.get("RESCON_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "reservation-conformance"


def state_root() -> Path:
    """state_root() is kwokctl's work directory (clusters live in <state_root>/clusters/<name>): $RESCON_STATE_DIR or <cache>/kwok."""
    explicit = os.environ.get("RESCON_STATE_DIR")
    return Path(explicit).expanduser() if explicit else cache_root() / "kwok"
