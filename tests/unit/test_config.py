"""parse_config: defaults, flags, the YAML file, precedence, and one-line errors that name the fix."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from reference_scheduler.config import FIELDS, FILE_KEYS, ConfigError, SchedulerConfig, file_key_of, flag_of, parse_config
from reference_scheduler.core.resources import Resources
from reference_scheduler.core.scoring import Strategy

pytestmark = pytest.mark.unit


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_no_arguments_give_the_documented_defaults() -> None:
    config = parse_config([])
    assert config == SchedulerConfig()
    assert config.scheduler_name == "tkn-scheduler"
    assert config.kubeconfig is None and config.context is None
    assert config.score_strategy is Strategy.LEAST_ALLOCATED
    assert config.resize_enabled is False
    assert config.metrics_port == 10260 and config.bind_address == "127.0.0.1"
    assert config.leader_elect is True
    assert (config.lease_name, config.lease_namespace) == ("tkn-scheduler", "kube-system")
    assert (config.lease_duration_seconds, config.renew_deadline_seconds, config.retry_period_seconds) == (15, 10, 2)
    assert (config.qps, config.burst) == (50.0, 100)
    assert (config.log_level, config.log_format) == ("info", "json")
    assert config.release_resync_seconds == 5.0
    assert config.volume_binding_timeout == 30.0
    assert config.resize_floor == Resources(cpu=10, memory=16 * 1024 * 1024)


def test_every_field_is_documented() -> None:
    for f in FIELDS:
        assert f.metadata.get("help"), f"{f.name} has no help text"


def test_names_are_derived_from_the_field() -> None:
    assert flag_of("metrics_port") == "--metrics-port"
    assert flag_of("resize_enabled") == "--enable-resize"
    assert file_key_of("scheduler_name") == "schedulerName"
    assert file_key_of("release_resync_seconds") == "releaseResyncSeconds"
    assert len(FILE_KEYS) == len(FIELDS)


def test_flags_set_every_kind_of_field() -> None:
    config = parse_config(
        [
            "--scheduler-name", "other",
            "--kubeconfig", "/tmp/kc",
            "--context", "kind-x",
            "--score-strategy", "MostAllocated",
            "--enable-resize",
            "--resize-floor-cpu", "50m",
            "--resize-floor-memory", "32Mi",
            "--metrics-port", "0",
            "--no-leader-elect",
            "--lease-namespace", "tkn-scheduler",
            "--qps", "20.5",
            "--burst", "40",
            "--log-format", "text",
            "--log-level", "debug",
            "--release-resync-seconds", "0.5",
            "--volume-binding-timeout", "120",
        ]
    )  # fmt: skip
    assert config == dataclasses.replace(
        SchedulerConfig(),
        scheduler_name="other",
        kubeconfig="/tmp/kc",
        context="kind-x",
        score_strategy=Strategy.MOST_ALLOCATED,
        resize_enabled=True,
        resize_floor_cpu="50m",
        resize_floor_memory="32Mi",
        metrics_port=0,
        leader_elect=False,
        lease_namespace="tkn-scheduler",
        qps=20.5,
        burst=40,
        log_format="text",
        log_level="debug",
        release_resync_seconds=0.5,
        volume_binding_timeout=120.0,
    )
    assert isinstance(config.score_strategy, Strategy)


def test_file_sets_values_and_flags_override_it(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schedulerName: from-file\nmetricsPort: 9100\nleaderElect: false\nscoreStrategy: MostAllocated\n"
        "resizeFloorCpu: 1\nqps: 10\n",
    )
    config = parse_config(["--config", path, "--metrics-port", "9200"])
    assert config.scheduler_name == "from-file"
    assert config.metrics_port == 9200
    assert config.leader_elect is False
    assert config.score_strategy is Strategy.MOST_ALLOCATED
    assert config.resize_floor_cpu == "1"
    assert config.qps == 10.0
    assert config.log_format == "json"  # neither says: the default


def test_a_flag_can_turn_a_file_boolean_back(tmp_path: Path) -> None:
    path = write(tmp_path, "leaderElect: false\n")
    assert parse_config(["--config", path, "--leader-elect"]).leader_elect is True


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    assert parse_config(["--config", write(tmp_path, "")]) == SchedulerConfig()


@pytest.mark.parametrize(
    ("argv", "file_text", "expected"),
    [
        pytest.param(["--score-strategy", "Balanced"], None, "choose one of LeastAllocated, MostAllocated", id="bad-strategy"),
        pytest.param(["--resize-floor-cpu", "ten"], None, "--resize-floor-cpu: invalid quantity 'ten'", id="bad-cpu-floor"),
        pytest.param(["--resize-floor-memory=-1Mi"], None, "use a Kubernetes quantity such as 16Mi", id="negative-memory-floor"),
        pytest.param(["--metrics-port", "70000"], None, "must be a port in 0..65535", id="port-out-of-range"),
        pytest.param(["--metrics-port", "http"], None, "invalid int value", id="port-not-a-number"),
        pytest.param(["--log-format", "xml"], None, "choose one of json, text", id="bad-log-format"),
        pytest.param(["--log-level", "loud"], None, "choose one of debug, info, warning, error", id="bad-log-level"),
        pytest.param(["--renew-deadline-seconds", "15"], None, "must be below --lease-duration-seconds", id="deadline-not-below-duration"),
        pytest.param(["--retry-period-seconds", "9"], None, "must exceed 1.2 x --retry-period-seconds", id="retry-too-slow"),
        pytest.param(["--qps", "0"], None, "--qps must be above 0", id="zero-qps"),
        pytest.param(["--volume-binding-timeout", "0"], None, "--volume-binding-timeout must be above 0 seconds", id="zero-volume-timeout"),
        pytest.param([], "volumeBindingTimeout: -1\n", "volumeBindingTimeout in ", id="negative-volume-timeout-in-file"),
        pytest.param(["--no-such-flag"], None, "unrecognized arguments: --no-such-flag", id="unknown-flag"),
        pytest.param([], "schedulerNmae: x\n", "unknown key 'schedulerNmae'; valid keys are: bindAddress, burst", id="unknown-file-key"),
        pytest.param([], "metricsPort: '9100'\n", "metricsPort must be a whole number", id="file-wrong-type"),
        pytest.param([], "leaderElect: 1\n", "leaderElect must be true or false", id="file-int-for-bool"),
        pytest.param([], "- a\n- b\n", "must hold a mapping of settings", id="file-not-a-mapping"),
        pytest.param([], "a: [\n", "is not valid YAML at line", id="file-bad-yaml"),
        pytest.param([], "scoreStrategy: Spread\n", "scoreStrategy in ", id="file-error-names-the-key"),
    ],
)
def test_bad_input_is_one_line_naming_the_fix(tmp_path: Path, argv: list[str], file_text: str | None, expected: str) -> None:
    if file_text is not None:
        argv = ["--config", write(tmp_path, file_text), *argv]
    with pytest.raises(ConfigError) as caught:
        parse_config(argv)
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message


def test_missing_file_says_to_pass_an_existing_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="pass an existing file to --config"):
        parse_config(["--config", str(tmp_path / "absent.yaml")])


def test_empty_kubeconfig_flag_unsets_the_file_value(tmp_path: Path) -> None:
    path = write(tmp_path, "kubeconfig: /etc/kc\n")
    assert parse_config(["--config", path]).kubeconfig == "/etc/kc"
    assert parse_config(["--config", path, "--kubeconfig", ""]).kubeconfig is None
