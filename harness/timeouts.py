"""Named timeouts: every wait in the harness is bounded by one field of TimeoutConfig.

A field is either a *conformance maximum* (an implementation slower than this
fails the scenario) or a *tuning knob* (it only bounds the harness's own
plumbing). Override one from the command line with `--timeout NAME=SECONDS`;
in code, use `dataclasses.replace(DEFAULT_TIMEOUTS, name=seconds)`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from harness.errors import HarnessError


@dataclass(frozen=True)
class TimeoutConfig:
    """TimeoutConfig holds every named timeout, in seconds."""

    # --- cluster plumbing (tuning knobs) ---
    #: kwokctl create cluster, until its processes run.
    cluster_create: float = field(default=180.0, metadata={"kind": "knob"})
    #: The API server answers /readyz after the processes start.
    api_ready: float = field(default=120.0, metadata={"kind": "knob"})
    #: Tekton's controller reports ready on its probes port.
    tekton_ready: float = field(default=120.0, metadata={"kind": "knob"})
    #: A CRD reports Established.
    crd_established: float = field(default=60.0, metadata={"kind": "knob"})
    #: A test namespace exists with its `default` ServiceAccount.
    namespace_ready: float = field(default=60.0, metadata={"kind": "knob"})
    #: KWOK nodes become Ready after they are created.
    nodes_ready: float = field(default=60.0, metadata={"kind": "knob"})
    #: A process stops after SIGTERM before it gets SIGKILL.
    process_stop: float = field(default=15.0, metadata={"kind": "knob"})
    #: kwokctl delete cluster.
    cluster_delete: float = field(default=120.0, metadata={"kind": "knob"})
    #: An injected admission fault (a ValidatingAdmissionPolicy) starts denying requests.
    fault_active: float = field(default=30.0, metadata={"kind": "knob"})
    #: A node held NotReady (harness.cluster.node_readiness), each step: the hold policy refuses Ready=True, the node
    #: reports Ready=False, the node lifecycle controller taints it not-ready; once let go, Ready=True without the taint.
    node_readiness: float = field(default=30.0, metadata={"kind": "knob"})
    #: The local cluster's affinity-assistant policy (a MutatingAdmissionPolicy) marks new pods.
    simulation_policy_active: float = field(default=30.0, metadata={"kind": "knob"})
    #: Objects of a test namespace are gone after it is deleted.
    namespace_deleted: float = field(default=120.0, metadata={"kind": "knob"})
    #: A cluster the suite did not start answers /version (existing clusters, kind); includes retries.
    api_reachable: float = field(default=15.0, metadata={"kind": "knob"})
    #: Concurrent scenarios on shared nodes (kind's workers, an existing cluster's slots, `-n N`): a scenario's
    #: pool waits for enough free slot nodes while other workers' scenarios hold them (about the longest scenario).
    pool_slots_free: float = field(default=600.0, metadata={"kind": "knob"})
    #: Concurrent scenarios (`-n N`): a scenario of the Tekton settings window (or one that runs alone) waits for
    #: every scenario handed out before it to have started (harness.suite.workers); past this it goes in anyway.
    earlier_slots_started: float = field(default=600.0, metadata={"kind": "knob"})
    #: A PVC pre-bound to its PersistentVolume reports Bound.
    volume_bound: float = field(default=30.0, metadata={"kind": "knob"})
    #: A kind cluster's default-storage provisioner (its Deployment in local-path-storage) has a Ready replica.
    storage_ready: float = field(default=120.0, metadata={"kind": "knob"})
    #: Downloading a pinned release manifest (Tekton's release.yaml on kind).
    manifest_download: float = field(default=60.0, metadata={"kind": "knob"})
    #: A killed scheduler under test serves again (external: a new pod matching --scheduler-pod-selector is Ready).
    scheduler_restart: float = field(default=60.0, metadata={"kind": "knob"})
    #: Another session (a suite run, the integration tests, the benchmark) stops using the local cluster.
    cluster_lock: float = field(default=3600.0, metadata={"kind": "knob"})
    #: The contract monitor has listed pods, nodes, PipelineRuns and records, before a scenario applies anything.
    monitor_synced: float = field(default=30.0, metadata={"kind": "knob"})
    #: The contract monitor, stopped, has evaluated every event it received: on a loaded machine its evaluator
    #: may run behind the watches, and a verdict drawn before it catches up would miss what it has not reached.
    monitor_drained: float = field(default=180.0, metadata={"kind": "knob"})
    #: A restarted cluster component (kube-apiserver, etcd, Tekton's controller) serves again: /readyz answers,
    #: the leader-elected controllers renewed their leases (or, if the outage cost them their lease, were started
    #: again), Tekton reconciles a probe TaskRun. Bounds each step of harness.cluster.local's restart_component.
    component_restart: float = field(default=90.0, metadata={"kind": "knob"})
    #: `rescon audit`: how long a watch may go without reaching the API server (retrying with backoff) before the
    #: auditor gives up and exits 1; an API server restart or a dropped connection is retried within it.
    audit_api_unreachable: float = field(default=300.0, metadata={"kind": "knob"})

    # --- scenario waits (conformance maximums) ---
    #: A task pod exists after its PipelineRun is created (Tekton's work, not the scheduler's).
    pod_created: float = field(default=60.0, metadata={"kind": "max"})
    #: A schedulable task pod is bound to a node.
    pod_scheduled: float = field(default=30.0, metadata={"kind": "max"})
    #: A pod of one of several new PipelineRuns is bound (a drawn batch's first): Tekton creates the runs' first
    #: pods (pod_created) and the scheduler binds one of them (pod_scheduled), the two waits back to back.
    first_pod_bound: float = field(default=90.0, metadata={"kind": "max"})
    #: The first pod after the scheduler under test was killed is bound: its successor may first wait out the
    #: dead leader's lease. 90 s covers kube-scheduler's defaults (15 s lease) with room; a scheduler with a
    #: longer lease sets `--rescon-timeout scheduler_failover=SECONDS` (its lease duration plus 30 s).
    scheduler_failover: float = field(default=90.0, metadata={"kind": "max"})
    #: The first pod created after a cluster component (kube-apiserver, etcd, Tekton's controller) was restarted
    #: is bound: the scheduler's watches reconnect with a backoff first (client-go's reflectors back off up to 30 s).
    component_recovery: float = field(default=60.0, metadata={"kind": "max"})
    #: How long a pod that must not be scheduled is watched to stay Pending.
    pod_stays_pending: float = field(default=8.0, metadata={"kind": "max"})
    #: How long idle_group_restart keeps a group idle (no pod of it alive, its next task behind a long task
    #: elsewhere) on each side of a scheduler restart, while another run waits for its room: a reservation holds
    #: through gaps of minutes in real pipelines, far longer than the seconds between most scenarios' tasks.
    group_idle: float = field(default=25.0, metadata={"kind": "max"})
    #: How long pending_start_timeout keeps its PipelineRun PipelineRunPending (and watches Tekton leave it alone)
    #: before starting it: the run's start comes that long after its creation. Its `timeouts.pipeline` is twice this,
    #: so a timeout counted from creation would fall due half-way through the run's time.
    run_pending: float = field(default=15.0, metadata={"kind": "max"})
    #: A bound task pod reports phase Running (KWOK starts it 0.2s after binding).
    pod_running: float = field(default=30.0, metadata={"kind": "max"})
    #: A pod whose owner was deleted is gone: the garbage collector deletes it and its node (KWOK, or kind's kubelet)
    #: finishes it; slower on a cluster that has just deleted thousands of objects, as after a 5000-node benchmark.
    pod_gone: float = field(default=60.0, metadata={"kind": "max"})
    #: How long a held task (sim.rescon.dev/hold) is watched to stay Running; longer than the default run-for.
    task_stays_running: float = field(default=3.0, metadata={"kind": "max"})
    #: A PipelineRun reaches a terminal condition.
    pipelinerun_done: float = field(default=120.0, metadata={"kind": "max"})
    #: A TaskRun reaches a terminal condition.
    taskrun_done: float = field(default=90.0, metadata={"kind": "max"})
    #: A lingering pod's requests drop to the resize floor after its TaskRun is done.
    resize_done: float = field(default=30.0, metadata={"kind": "max"})
    #: A ReservationRecord reaches the expected state for a group.
    record_state: float = field(default=30.0, metadata={"kind": "max"})
    #: How long a group is watched to keep its claim (through a retry gap, beside a failed bind); longer than the
    #: reference's 1 s + 2 s bind retries, so a rollback that drops another holder's claim shows within it.
    group_stays: float = field(default=3.0, metadata={"kind": "max"})
    #: The active label agrees with the status again after a status write that changed it (the monitor's
    #: active-label-diverged rule; docs/contract.md section 9).
    label_converges: float = field(default=5.0, metadata={"kind": "max"})
    #: How long a group may stay Reserved after the contract monitor first saw its release due (every group task done or
    #: skipped, the run's verdict, the run deleted, a graceful stop with no group task left to run): the monitor's
    #: release-late rule, docs/contract.md section 8's "promptly". Counted from the monitor's own read that first showed it
    #: due (it reads such a run at most every 2 s), never from Tekton's timestamps, so the count can only fall short.
    #: A release is a bind's kind of work (a watch event, a decision, one write): the soak's slowest bind took 3.6 s of
    #: pod_scheduled on the loaded 2-core machine (docs/soak.md: 10 runs, three scenarios at a time), and the reference
    #: releases on the TaskRun's update or at its 5 s resync. 15 s is four times the one and three of the other, and half of
    #: record_state, so that the monitor, not a scenario's wait for Released, decides a late release.
    release_late: float = field(default=15.0, metadata={"kind": "max"})
    #: Tekton writes a started PipelineRun's status.pipelineSpec, the plan a scheduler reads (Tekton's work, not the
    #: scheduler's).
    pipelinerun_resolved: float = field(default=60.0, metadata={"kind": "max"})
    #: A pod kept Pending while its PipelineRun had no plan is bound once Tekton wrote the plan: the scheduler tries
    #: it again on that update or when the run's record appears (docs/contract.md section 2, the first pod before
    #: the plan), not at a periodic resync. Well below the reference's 60 s flush of unschedulable pods (and
    #: kube-scheduler's 5 min), so a scheduler that waits for one fails.
    parked_pod_scheduled: float = field(default=15.0, metadata={"kind": "max"})
    #: A pod whose claim's provisioning failed on the node the scheduler chose is bound elsewhere: the scheduler gave
    #: up waiting for the volume (docs/contract.md section 7, Volumes: the wait is bounded), rolled its claim back
    #: and chose again. The reference gives up after 30 s (--volume-binding-timeout); kube-scheduler after 600 s
    #: (bindTimeoutSeconds). A scheduler with a longer bound sets `--rescon-timeout provisioning_given_up=SECONDS`
    #: (its bound plus 30 s).
    provisioning_given_up: float = field(default=60.0, metadata={"kind": "max"})
    #: `rescon replay`: every run of a round reaches a terminal condition, counted from the round's apply. The runs are a
    #: user's pipelines with simulated steps (a couple of seconds each), applied `--copies` at once to contend for a pool
    #: that may hold only a few at a time: far longer than one scenario's run (pipelinerun_done), and still bounded, so a
    #: pod that no scheduler ever binds ends the round with the runs still going named, never a hang.
    replay_run_done: float = field(default=600.0, metadata={"kind": "max"})

    def with_overrides(self, overrides: dict[str, float]) -> TimeoutConfig:
        """with_overrides({'pod_scheduled': 60}) returns a copy; an unknown name fails naming the known ones."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise HarnessError(f"unknown timeout {unknown[0]!r}: use one of {', '.join(sorted(known))}")
        return dataclasses.replace(self, **overrides)


DEFAULT_TIMEOUTS = TimeoutConfig()


def parse_override(text: str) -> tuple[str, float]:
    """parse_override('pod_scheduled=60') == ('pod_scheduled', 60.0)."""
    name, sep, value = text.partition("=")
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not sep or not name or seconds <= 0:
        raise HarnessError(f"bad --timeout {text!r}: write NAME=SECONDS, e.g. --timeout pod_scheduled=60")
    return name.strip(), seconds
