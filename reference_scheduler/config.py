"""SchedulerConfig: every setting of the reference scheduler, from flags, a YAML file and defaults.

Each setting is one field of a frozen dataclass. Its flag (kebab-case) and its
config-file key (camelCase) are derived from the field name, and its help text
is the field's documentation, so a setting is named in one place only. A few
flags read better than their field name (``--enable-resize`` for
``resize_enabled``); those say so in the field's metadata.

Precedence: flags > ``--config FILE`` > defaults. Worked example: the file
says ``metricsPort: 9100`` and the command line says ``--metrics-port 9200``;
the scheduler serves on 9200, and every other setting the file names wins
over its default.

Bad input raises ``ConfigError`` with one line that names the setting (as the
flag or the file key that set it) and the fix, so ``main`` can print it and
exit without a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, NoReturn, Sequence, get_args

import yaml

from reference_scheduler.core.resources import InvalidQuantity, Resources, cpu_millis, memory_bytes
from reference_scheduler.core.scoring import Strategy
from reference_scheduler.core.volume_provisioning import DEFAULT_VOLUME_BINDING_TIMEOUT

LogLevel = Literal["debug", "info", "warning", "error"]
"""LogLevel names the least severe log records that are written."""

LogFormat = Literal["json", "text"]
"""LogFormat is "json" (one object a line, for log collectors) or "text" (for a terminal)."""

LEADER_JITTER_FACTOR = 1.2
"""LEADER_JITTER_FACTOR: renew_deadline must exceed retry_period times this, as client-go requires.

Otherwise a leader whose renewals are spread out by jitter could miss its
deadline with not even one retry in it.
"""


class ConfigError(ValueError):
    """ConfigError is a bad setting; its message is one line that names the setting and the fix."""


def _doc(text: str, *, flag: str | None = None) -> dict[str, str]:
    """_doc attaches a field's help text (and an unusual flag name), so both live next to the default."""
    meta = {"help": text}
    if flag is not None:
        meta["flag"] = flag
    return meta


@dataclass(frozen=True)
class SchedulerConfig:
    """SchedulerConfig holds every setting; override in code with ``dataclasses.replace``."""

    scheduler_name: str = field(
        default="tkn-scheduler",
        metadata=_doc("The spec.schedulerName of the pods this scheduler places; other pods are left alone."),
    )
    kubeconfig: str | None = field(
        default=None,
        metadata=_doc("Path of a kubeconfig file; unset means the in-cluster ServiceAccount."),
    )
    context: str | None = field(
        default=None,
        metadata=_doc("The kubeconfig context to use; unset means the file's current context."),
    )
    score_strategy: Strategy = field(
        default=Strategy.LEAST_ALLOCATED,
        metadata=_doc("How nodes are ranked: LeastAllocated spreads work, MostAllocated packs it."),
    )
    resize_enabled: bool = field(
        default=False,
        metadata=_doc(
            "Shrink a running group's pods in place (pods/resize) down to their reservation's share.",
            flag="--enable-resize",
        ),
    )
    resize_floor_cpu: str = field(
        default="10m",
        metadata=_doc("In-place resizes never take a pod's CPU request below this quantity."),
    )
    resize_floor_memory: str = field(
        default="16Mi",
        metadata=_doc("In-place resizes never take a pod's memory request below this quantity."),
    )
    metrics_port: int = field(
        default=10260,
        metadata=_doc("Port of the HTTP server for /metrics and /healthz; 0 disables the server."),
    )
    bind_address: str = field(
        default="127.0.0.1",
        metadata=_doc("Address the HTTP server listens on; 0.0.0.0 in a pod, so probes can reach it."),
    )
    leader_elect: bool = field(
        default=True,
        metadata=_doc("Run as one of several replicas, only the holder of the Lease scheduling."),
    )
    lease_name: str = field(
        default="tkn-scheduler",
        metadata=_doc("Name of the coordination.k8s.io Lease the replicas compete for."),
    )
    lease_namespace: str = field(
        default="kube-system",
        metadata=_doc("Namespace of the Lease; the scheduler needs a Role there to read and write it."),
    )
    lease_duration_seconds: int = field(
        default=15,
        metadata=_doc("How long the other replicas wait, after the last renewal they saw, before taking over."),
    )
    renew_deadline_seconds: int = field(
        default=10,
        metadata=_doc(
            "The leader stops scheduling when it could not renew for this long; must be below the lease duration."
        ),
    )
    retry_period_seconds: int = field(
        default=2,
        metadata=_doc("Pause between two attempts to acquire or renew the Lease."),
    )
    qps: float = field(
        default=50.0,
        metadata=_doc("Sustained API requests per second the client allows itself."),
    )
    burst: int = field(
        default=100,
        metadata=_doc("API requests the client may make at once above the sustained rate."),
    )
    log_level: LogLevel = field(
        default="info",
        metadata=_doc("The least severe log records written: debug, info, warning or error."),
    )
    log_format: LogFormat = field(
        default="json",
        metadata=_doc("json writes one object a line, for log collectors; text is for a terminal."),
    )
    release_resync_seconds: float = field(
        default=5.0,
        metadata=_doc("How often every reservation is re-checked for release, besides the watch events."),
    )
    percentage_of_nodes_to_score: int = field(
        default=0,
        metadata=_doc(
            "As kube-scheduler's: stop filtering once this percentage of the nodes is found feasible "
            "(at least 100 nodes; clusters under 100 nodes are filtered whole). 0: adaptive, "
            "50 percent less 1 per 125 nodes, at least 5 percent; 100: every node, every attempt."
        ),
    )
    tekton_namespace: str = field(
        default="tekton-pipelines",
        metadata=_doc(
            "The namespace Tekton's controller runs in, where its feature-flags ConfigMap is "
            "(openshift-pipelines for OpenShift Pipelines); the scheduler reads the flags that shape pods, and coschedule."
        ),
    )
    volume_binding_timeout: float = field(
        default=DEFAULT_VOLUME_BINDING_TIMEOUT,
        metadata=_doc(
            "Seconds a bind waits for the pod's WaitForFirstConsumer claims, once annotated with the chosen node, "
            "to be Bound to a volume there; past it the bind fails, the selection is taken off, and the pod is tried again."
        ),
    )

    @property
    def resize_floor(self) -> Resources:
        """resize_floor is the floors as exact amounts: ``Resources(cpu=10, memory=16777216)`` by default."""
        return Resources(cpu=cpu_millis(self.resize_floor_cpu), memory=memory_bytes(self.resize_floor_memory))


FIELDS: tuple[dataclasses.Field[Any], ...] = dataclasses.fields(SchedulerConfig)
"""FIELDS lists the settings in declaration order, which is also the order of --help."""


def flag_of(name: str) -> str:
    """flag_of('metrics_port') == '--metrics-port'; a field's metadata may name another flag."""
    for f in FIELDS:
        if f.name == name:
            return str(f.metadata.get("flag") or "--" + name.replace("_", "-"))
    raise KeyError(name)


def file_key_of(name: str) -> str:
    """file_key_of('scheduler_name') == 'schedulerName': config files use the Kubernetes camelCase."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


FILE_KEYS: dict[str, str] = {file_key_of(f.name): f.name for f in FIELDS}
"""FILE_KEYS maps each valid config-file key to its field name."""

LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)
LOG_FORMATS: tuple[str, ...] = get_args(LogFormat)
STRATEGIES: tuple[str, ...] = tuple(s.value for s in Strategy)


class _Parser(argparse.ArgumentParser):
    """_Parser raises ConfigError instead of exiting, so main decides how a bad flag is reported."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message} (see --help)")


def _field_type(f: dataclasses.Field[Any]) -> str:
    """_field_type is the annotation as written (annotations are strings under `from __future__`)."""
    return str(f.type)


def build_parser() -> argparse.ArgumentParser:
    """build_parser makes the command line from FIELDS; no flag has a default, so given flags are known."""
    parser = _Parser(
        prog="tkn-scheduler",
        description="Reference reservation scheduler for Tekton task pods.",
        argument_default=argparse.SUPPRESS,
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="YAML file with the same settings in camelCase (schedulerName: ...); flags override it.",
    )
    for f in FIELDS:
        kind = _field_type(f)
        default = f"(default: {'unset' if f.default is None else f.default})"
        help_text = f"{f.metadata['help']} {default}"
        flag = flag_of(f.name)
        if kind == "bool":
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, help=help_text)
        elif kind == "int":
            parser.add_argument(flag, dest=f.name, type=int, metavar="N", help=help_text)
        elif kind == "float":
            parser.add_argument(flag, dest=f.name, type=float, metavar="X", help=help_text)
        else:
            parser.add_argument(flag, dest=f.name, metavar="VALUE", help=help_text)
    return parser


def _read_file(path: str) -> dict[str, Any]:
    """_read_file loads the YAML mapping of --config FILE, keyed by field name."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot read config file {path}: {err.strerror or err}; pass an existing file to --config") from err
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        raise ConfigError(f"config file {path} is not valid YAML{at}: fix its syntax") from err
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"config file {path} must hold a mapping of settings (schedulerName: ...), not a {type(loaded).__name__}")
    values: dict[str, Any] = {}
    for key, value in loaded.items():
        name = FILE_KEYS.get(str(key))
        if name is None:
            valid = ", ".join(sorted(FILE_KEYS))
            raise ConfigError(f"config file {path}: unknown key {key!r}; valid keys are: {valid}")
        values[name] = _coerce_file_value(path, str(key), _field_type(next(f for f in FIELDS if f.name == name)), value)
    return values


def _coerce_file_value(path: str, key: str, kind: str, value: Any) -> Any:
    """_coerce_file_value checks a YAML value against the field's type; YAML's 1 and "1" differ."""

    def wrong(expected: str) -> ConfigError:
        return ConfigError(f"config file {path}: {key} must be {expected}, not {value!r}")

    if kind == "bool":
        if not isinstance(value, bool):
            raise wrong("true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong("a whole number")
        return value
    if kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number")
        return float(value)
    if kind == "str | None" and value is None:
        return None
    if key in ("resizeFloorCpu", "resizeFloorMemory") and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)  # `resizeFloorCpu: 1` is the quantity "1", as kubectl reads it
    if not isinstance(value, str):
        raise wrong("a string")
    return value


def _validate(config: SchedulerConfig, origin: Mapping[str, str]) -> None:
    """_validate checks what the types cannot; each message names where the bad value came from."""

    def where(name: str) -> str:
        return origin.get(name, flag_of(name))

    if not config.scheduler_name:
        raise ConfigError(f"{where('scheduler_name')} must not be empty: name the schedulerName your pods use")
    if config.score_strategy not in STRATEGIES:
        raise ConfigError(
            f"{where('score_strategy')}: unknown strategy {config.score_strategy!r}; choose one of {', '.join(STRATEGIES)}"
        )
    for name, parse in (("resize_floor_cpu", cpu_millis), ("resize_floor_memory", memory_bytes)):
        value = getattr(config, name)
        try:
            parse(value)
        except InvalidQuantity as err:
            raise ConfigError(
                f"{where(name)}: invalid quantity {value!r}; use a Kubernetes quantity such as "
                f"{'10m' if name.endswith('cpu') else '16Mi'}"
            ) from err
    if not 0 <= config.metrics_port <= 65535:
        raise ConfigError(f"{where('metrics_port')} must be a port in 0..65535 (0 disables the HTTP server), not {config.metrics_port}")
    if not config.bind_address:
        raise ConfigError(f"{where('bind_address')} must not be empty: use 127.0.0.1 or 0.0.0.0")
    for name in ("lease_name", "lease_namespace"):
        if not getattr(config, name):
            raise ConfigError(f"{where(name)} must not be empty")
    for name in ("lease_duration_seconds", "renew_deadline_seconds", "retry_period_seconds"):
        if getattr(config, name) < 1:
            raise ConfigError(f"{where(name)} must be at least 1 second, not {getattr(config, name)}")
    if config.renew_deadline_seconds >= config.lease_duration_seconds:
        raise ConfigError(
            f"{where('renew_deadline_seconds')} ({config.renew_deadline_seconds}) must be below "
            f"{where('lease_duration_seconds')} ({config.lease_duration_seconds}), or two replicas could lead at once"
        )
    if config.renew_deadline_seconds <= LEADER_JITTER_FACTOR * config.retry_period_seconds:
        raise ConfigError(
            f"{where('renew_deadline_seconds')} ({config.renew_deadline_seconds}) must exceed "
            f"{LEADER_JITTER_FACTOR} x {where('retry_period_seconds')} ({config.retry_period_seconds}): "
            "lower the retry period or raise the deadline"
        )
    if not config.qps > 0:
        raise ConfigError(f"{where('qps')} must be above 0, not {config.qps}")
    if config.burst < 1:
        raise ConfigError(f"{where('burst')} must be at least 1, not {config.burst}")
    if config.log_level not in LOG_LEVELS:
        raise ConfigError(f"{where('log_level')}: unknown level {config.log_level!r}; choose one of {', '.join(LOG_LEVELS)}")
    if config.log_format not in LOG_FORMATS:
        raise ConfigError(f"{where('log_format')}: unknown format {config.log_format!r}; choose one of {', '.join(LOG_FORMATS)}")
    if not 0 <= config.percentage_of_nodes_to_score <= 100:
        raise ConfigError(f"{where('percentage_of_nodes_to_score')} must be in 0..100 (0: adaptive), not {config.percentage_of_nodes_to_score}")
    if not config.release_resync_seconds > 0:
        raise ConfigError(f"{where('release_resync_seconds')} must be above 0 seconds, not {config.release_resync_seconds}")
    if not config.volume_binding_timeout > 0:
        raise ConfigError(
            f"{where('volume_binding_timeout')} must be above 0 seconds (how long a bind waits for its volumes), not {config.volume_binding_timeout}"
        )


def parse_config(argv: Sequence[str]) -> SchedulerConfig:
    """parse_config reads flags (argv without the program name), then --config FILE, then defaults.

    Example: ``parse_config(["--score-strategy", "MostAllocated"]).score_strategy == "MostAllocated"``.
    """
    given = vars(build_parser().parse_args(list(argv)))
    file_path = given.pop("config", None)
    from_file = _read_file(file_path) if file_path is not None else {}
    origin = {name: f"{file_key_of(name)} in {file_path}" for name in from_file}
    origin.update({name: flag_of(name) for name in given})
    values = {**from_file, **given}
    # Empty strings mean "unset" for the optional paths, so `--kubeconfig ""` undoes a file's value.
    for name in ("kubeconfig", "context"):
        if values.get(name) == "":
            values[name] = None
    strategy = values.get("score_strategy")
    if strategy is not None:
        if strategy not in STRATEGIES:
            raise ConfigError(
                f"{origin['score_strategy']}: unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}"
            )
        values["score_strategy"] = Strategy(strategy)
    config = SchedulerConfig(**values)
    _validate(config, origin)
    return config
