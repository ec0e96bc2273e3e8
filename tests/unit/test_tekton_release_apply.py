"""Tekton's release applied on a kept kind cluster whose webhook pod is still starting."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

import kubernetes
import pytest

from harness.cluster import tekton_release
from harness.timeouts import TimeoutConfig
from harness.waits import WaitTimeout

pytestmark = pytest.mark.unit

REFUSED = json.dumps(
    {
        "kind": "Status",
        "status": "Failure",
        "message": 'Internal error occurred: failed calling webhook "config.webhook.pipeline.tekton.dev": failed to call webhook: '
        'Post "https://tekton-pipelines-webhook.tekton-pipelines.svc:443/config-validation?timeout=10s": context deadline exceeded',
        "reason": "InternalError",
        "code": 500,
    }
)


def _api_error(status: int, body: str) -> kubernetes.dynamic.exceptions.DynamicApiError:
    cause = kubernetes.client.exceptions.ApiException(status=status, reason="refused")
    cause.body = body
    return kubernetes.dynamic.exceptions.api_exception(cause)  # type: ignore[no-any-return]


class RefusingKube:
    """A Kube whose API server refuses the first `refusals` applies of a release with `error`."""

    def __init__(self, refusals: int, error: Exception) -> None:
        self.refusals = refusals
        self.error = error
        self.applied: list[str] = []

    def apply_all(self, manifests: Iterable[Mapping[str, Any]]) -> None:
        for manifest in manifests:
            if self.refusals > 0:
                self.refusals -= 1
                raise self.error
            self.applied.append(manifest["metadata"]["name"])


MANIFESTS = [{"kind": "ConfigMap", "metadata": {"name": "config-defaults"}}, {"kind": "Deployment", "metadata": {"name": "webhook"}}]


def test_a_webhook_that_does_not_answer_is_told_from_other_refusals() -> None:
    assert tekton_release.webhook_not_serving(500, REFUSED)
    assert not tekton_release.webhook_not_serving(500, '{"message": "etcdserver: request timed out"}')
    assert not tekton_release.webhook_not_serving(400, REFUSED)


def test_the_release_is_applied_again_until_the_webhook_answers() -> None:
    kube = RefusingKube(2, _api_error(500, REFUSED))
    tekton_release._apply_once_webhooks_answer(kube, MANIFESTS, timeouts=TimeoutConfig(tekton_ready=30.0))  # type: ignore[arg-type]
    assert kube.applied == ["config-defaults", "webhook"]


def test_any_other_refusal_fails_at_once() -> None:
    kube = RefusingKube(1, _api_error(422, '{"message": "data.default-timeout-minutes: invalid value"}'))
    with pytest.raises(kubernetes.dynamic.exceptions.DynamicApiError):
        tekton_release._apply_once_webhooks_answer(kube, MANIFESTS, timeouts=TimeoutConfig(tekton_ready=30.0))  # type: ignore[arg-type]
    assert kube.applied == []


def test_a_webhook_that_never_answers_is_a_bounded_wait_naming_it() -> None:
    kube = RefusingKube(10**6, _api_error(500, REFUSED))
    with pytest.raises(WaitTimeout, match="config.webhook.pipeline.tekton.dev"):
        tekton_release._apply_once_webhooks_answer(kube, MANIFESTS, timeouts=TimeoutConfig(tekton_ready=0.5))  # type: ignore[arg-type]
