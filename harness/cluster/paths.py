"""Where the harness keeps its files: the per-user tool cache and cluster state.

The tool cache is per user and outside the checkout, so every clone (and CI on
the same machine) reuses binaries that took many minutes to build.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The checkout that holds tools/ (the Go modules that pin upstream programs).
REPO_ROOT = Path(__file__).resolve().parents[2]


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
