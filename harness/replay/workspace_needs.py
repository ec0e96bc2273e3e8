"""workspace_needs: what a run's workspaces and pod template need in the replay's namespace, and what stands in when the files lack it.

The replay's namespace is new, so it holds only what replay applies there:

* a PersistentVolumeClaim a workspace names must be among the given files
  (else bad input: replay cannot know its size or class);
* a ConfigMap or Secret a workspace names, if not given, is made empty (a
  Secret's values are rarely committed, and nothing reads them here);
* a ServiceAccount the run names is made, since the API server refuses a pod
  whose ServiceAccount does not exist.

    >>> run = {"spec": {"workspaces": [{"name": "creds", "secret": {"secretName": "git-auth"}}],
    ...                 "taskRunTemplate": {"serviceAccountName": "pipeline"}}}
    >>> needs = workspace_needs(run, "PipelineRun build", claims=frozenset(), given=frozenset())
    >>> [(o["kind"], o["metadata"]["name"]) for o in needs.objects], needs.notes
    ([('Secret', 'git-auth'), ('ServiceAccount', 'pipeline')], ('workspace creds: Secret git-auth is not among the given files: an empty one stands in',))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.replay import bad_input
from harness.replay.bad_input import ReplayInputError

Obj = dict[str, Any]

#: The ServiceAccount every namespace has already.
DEFAULT_SERVICE_ACCOUNT = "default"


@dataclass(frozen=True)
class WorkspaceNeeds:
    """WorkspaceNeeds are the objects a run needs made in the namespace, and a note for each stand-in."""

    objects: tuple[Obj, ...]
    notes: tuple[str, ...]


def config_map(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def secret(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}


def service_account(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}


def service_accounts(run_spec: Mapping[str, Any]) -> list[str]:
    """service_accounts() are the ServiceAccounts a run's pods use, other than `default`, in order."""
    names = [(run_spec.get("taskRunTemplate") or {}).get("serviceAccountName")]
    names += [entry.get("serviceAccountName") for entry in run_spec.get("taskRunSpecs") or []]
    return list(dict.fromkeys(str(n) for n in names if n and n != DEFAULT_SERVICE_ACCOUNT))


def workspace_needs(run: Mapping[str, Any], where: str, *, claims: frozenset[str], given: frozenset[tuple[str, str]]) -> WorkspaceNeeds:
    """workspace_needs() checks the run's claims against `claims` (the given PersistentVolumeClaims) and makes what else it needs.

    `given` are the (kind, name) of the ConfigMaps and Secrets the files hold.
    """
    spec = run.get("spec") or {}
    objects: list[Obj] = []
    notes: list[str] = []
    for binding in spec.get("workspaces") or []:
        workspace = binding.get("name")
        claim = (binding.get("persistentVolumeClaim") or {}).get("claimName")
        if claim and claim not in claims:
            raise ReplayInputError(bad_input.claim_missing(where, str(workspace), str(claim)))
        for kind, key, make in (("ConfigMap", "configMap", config_map), ("Secret", "secret", secret)):
            source = binding.get(key) or {}
            name = source.get("name") if kind == "ConfigMap" else source.get("secretName")
            if name and (kind, name) not in given:
                objects.append(make(str(name)))
                notes.append(f"workspace {workspace}: {kind} {name} is not among the given files: an empty one stands in")
    objects += [service_account(name) for name in service_accounts(spec)]
    return WorkspaceNeeds(tuple(objects), tuple(notes))
