"""The Lease names the suite gives the scheduler under test: its --scheduler-name, lowercased, then checked.

A pod's schedulerName may be any string (the API server does not check it),
and a scheduler's plugin README may well use one like
`one-node-per-pipelineRun`. A Lease's name must be a lowercase RFC 1123
subdomain, so the name is lowercased; one that still is no such subdomain
(an underscore, a leading dot, too long) cannot name a Lease, and the suite
refuses it before any scenario, naming the fix.
"""

from __future__ import annotations

import re

from harness.errors import HarnessError

#: A lowercase RFC 1123 subdomain, as the API server checks object names.
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
MAX_SUBDOMAIN_LENGTH = 253

#: The Lease of a single launch (a config template's lease_name), and the one the replicas contend for.
UNDER_TEST = "-under-test"
REPLICAS = "-replicas"


def lease_name(scheduler_name: str, suffix: str) -> str:
    """lease_name('One-Node-gw0', UNDER_TEST) == 'one-node-gw0-under-test'; fails naming the fix when no Lease can bear it."""
    name = f"{scheduler_name.lower()}{suffix}"
    if len(name) > MAX_SUBDOMAIN_LENGTH or not SUBDOMAIN.fullmatch(name):
        raise HarnessError(
            f"--scheduler-name {scheduler_name!r} cannot name the scheduler's Lease ({name[:80]!r} is not a lowercase RFC 1123 subdomain): "
            f"choose a name of letters, digits, '-' and '.' that starts and ends with a letter or digit, at most {MAX_SUBDOMAIN_LENGTH - len(suffix)} long"
        )
    return name


def check_lease_names(scheduler_name: str) -> None:
    """check_lease_names() fails before any scenario when a Lease the suite may create for this scheduler name would be refused."""
    for suffix in (UNDER_TEST, REPLICAS):
        lease_name(scheduler_name, suffix)
