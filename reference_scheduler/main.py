"""tkn-scheduler: the reference reservation scheduler's entry point.

    tkn-scheduler --kubeconfig ~/.kube/config            # out of cluster
    tkn-scheduler --config /etc/tkn-scheduler/config.yaml  # in cluster (see deploy/)

It waits to lead (a coordination.k8s.io Lease), syncs its caches, then
schedules until SIGTERM/SIGINT. Exit codes: 0 on a clean stop, 1 on a startup
failure (one line naming the fix), 2 on bad configuration.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Callable, Sequence

from reference_scheduler.runtime.heap import filling_caches, importing

# The imports make some 80,000 objects that live as long as the process: never walked by the collector (runtime/heap.py).
with importing():
    import kubernetes
    import urllib3

    from reference_scheduler.config import ConfigError, SchedulerConfig, parse_config
    from reference_scheduler.runtime.kube_api import KubeApi
    from reference_scheduler.runtime.leader import LeaderElector, default_identity
    from reference_scheduler.runtime.observability import ApiClientName, Observability, configure_logging
    from reference_scheduler.runtime.ratelimit import TokenBucket, limit_requests
    from reference_scheduler.runtime.records import GROUP, PLURAL, VERSION
    from reference_scheduler.runtime.scheduler import MAIN_CLIENT_CONNECTIONS, Scheduler
    from reference_scheduler.runtime.tls import share_tls_context
    from reference_scheduler.runtime.token_refresh import refresh_token_only

log = logging.getLogger("tkn-scheduler")

#: How often the queue-length and active-reservation gauges are refreshed.
GAUGE_SECONDS = 2.0


def api_client(
    config: SchedulerConfig, *, on_request: Callable[[str], None] | None = None, connections: int = 0
) -> kubernetes.client.ApiClient:
    """api_client() loads the kubeconfig (or the in-cluster config), its requests limited to --qps/--burst.

    Each client has its own token bucket, as each client-go clientset does; `on_request(method)`
    is called for every request (the API-requests metric). Its pool keeps up to `connections`
    connections (at least 4 and a tenth of the burst).
    """
    configuration = kubernetes.client.Configuration()
    if config.kubeconfig:
        kubernetes.config.load_kube_config(config_file=config.kubeconfig, context=config.context, client_configuration=configuration)  # type: ignore[no-untyped-call]
    else:
        kubernetes.config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    # Before each request the loader's hook refreshes the token; the rest it would re-apply is in place (runtime/token_refresh.py).
    refresh_token_only(configuration)
    configuration.retries = urllib3.Retry(total=3, connect=3, read=0, backoff_factor=0.2)
    # The pool size is how many idle connections are kept, not a bound on requests open at once (urllib3
    # opens another when none is free, and closes it afterwards if the pool is full); the token bucket
    # bounds their rate (runtime/ratelimit.py).
    configuration.connection_pool_maxsize = max(4, config.burst // 10, connections)
    api = kubernetes.client.ApiClient(configuration)
    # One TLS context for all of the client's connections, made now rather than at each (runtime/tls.py).
    share_tls_context(api.rest_client.pool_manager)
    limit_requests(api, TokenBucket(config.qps, config.burst), on_request)
    return api


#: The ReservationRecord API the scheduler publishes its state through (docs/contract.md).
RECORDS_API = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
RECORDS_CRD_FIX = "install it first: kubectl apply -f harness/contract/reservationrecord.crd.yaml"


def check_records_api(api: kubernetes.client.ApiClient) -> None:
    """check_records_api() fails in one line, naming the fix, when the ReservationRecord CRD is not installed.

    Without it the records cache never syncs and every grouped pod would wait;
    better to refuse to start, like a controller whose CRD is missing.
    """
    try:
        KubeApi(api).list_cluster_custom_object(
            GROUP, VERSION, PLURAL, limit=1, _preload_content=False, _request_timeout=10
        )
    except kubernetes.client.ApiException as err:
        if err.status == 404:
            raise RuntimeError(f"the ReservationRecord CRD ({PLURAL}.{GROUP}, {RECORDS_API}) is not installed: {RECORDS_CRD_FIX}") from None
        raise RuntimeError(f"cannot read {RECORDS_API} (HTTP {err.status}): check the API server and the scheduler's RBAC") from None
    except urllib3.exceptions.HTTPError as err:
        raise RuntimeError(f"cannot reach the API server ({type(err).__name__}): check --kubeconfig and that the cluster is up") from None


def serve(config: SchedulerConfig) -> int:
    observability = Observability()
    api = api_client(config, on_request=lambda verb: observability.api_request(ApiClientName.MAIN, verb), connections=MAIN_CLIENT_CONNECTIONS)
    check_records_api(api)
    # Events get a client (and a token bucket) of their own, as kube-scheduler's event broadcaster does.
    events_api = api_client(config, on_request=lambda verb: observability.api_request(ApiClientName.EVENTS, verb))
    scheduler = Scheduler(
        api,
        events_api=events_api,
        scheduler_name=config.scheduler_name,
        strategy=config.score_strategy,
        release_resync_seconds=config.release_resync_seconds,
        percentage_of_nodes_to_score=config.percentage_of_nodes_to_score,
        volume_binding_timeout=config.volume_binding_timeout,
        tekton_namespace=config.tekton_namespace,
        on_coschedule=observability.set_coschedule_disabled,
        resize_floor=config.resize_floor if config.resize_enabled else None,
        on_attempt=observability.attempt,
        on_release=observability.released,
    )
    elector = (
        LeaderElector(
            api,
            namespace=config.lease_namespace,
            name=config.lease_name,
            identity=default_identity(),
            lease_duration=config.lease_duration_seconds,
            renew_deadline=config.renew_deadline_seconds,
            retry_period=config.retry_period_seconds,
        )
        if config.leader_elect
        else None
    )
    # A follower has no caches yet; it is healthy as long as it is waiting to lead.
    server = observability.serve(
        config.bind_address,
        config.metrics_port,
        lambda: scheduler.healthy() if elector is None or elector.is_leader else not scheduler.stop_event.is_set(),
    )

    def stop(signum: int, frame: object) -> None:
        log.info("signal %d: stopping", signum)
        scheduler.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def refresh_gauges() -> None:
        while not scheduler.stop_event.wait(GAUGE_SECONDS):
            observability.set_pending(scheduler.queue.lengths())
            observability.set_active_reservations(len(scheduler.view.active_reservations()))

    def lead() -> None:
        observability.set_leader(True)
        with filling_caches():
            scheduler.start_informers()
        threading.Thread(target=refresh_gauges, name="gauges", daemon=True).start()
        scheduler.run()

    def lost() -> None:
        observability.set_leader(False)
        # A replica that lost the lease must not keep binding: stop, and let the Deployment restart it.
        scheduler.stop()

    try:
        if elector is not None:
            elector.run(lead, lost, scheduler.stop_event)
        else:
            lead()
    finally:
        if server is not None:
            server.stop()
        log.info("API requests: %s", observability.request_summary())
    # run() returning without a stop request means the lease was lost: exit non-zero to be restarted.
    return 0 if scheduler.stop_event.is_set() else 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        config = parse_config(sys.argv[1:] if argv is None else argv)
    except ConfigError as err:
        print(f"tkn-scheduler: {err}", file=sys.stderr)
        return 2
    configure_logging(config.log_level, config.log_format)
    try:
        return serve(config)
    except (kubernetes.config.ConfigException, RuntimeError, OSError) as err:
        print(f"tkn-scheduler: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    threading.current_thread().name = "main"
    sys.exit(main())
