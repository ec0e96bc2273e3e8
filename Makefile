# reservation-conformance: the two commands a user needs are `make e2e` and `make test`.
# Everything else is a step of those, exposed for local work.

PYTHON   ?= python3
VENV     ?= .venv
CLUSTER  ?= local
REPORTS  ?= reports
PYTEST_ARGS ?=
# Scenarios run this many at a time on the local cluster, each on its own pool with its own scheduler
# (harness/suite/workers.py); 0 runs them one by one in one process. Most of a scenario is waiting (a pod held
# Pending, a task held Running): at five this 2-core machine was 71 % busy. With 82 scenarios, eight took 223.5 and
# 224.9 s of pytest against six's 237.3 s. At 430d761, on a fresh cluster: eight 212.2 s, ten 202.1 s; twelve 192.6 s but
# exact_fit_handoff's t01 stopped before its hold ended (a setup error): the load stretches Tekton's hand-off.
# With Tekton's controller at its performance guide's client limits (63dce88): eight 182.7 s, ten 184.2 s (93 % busy).
E2E_WORKERS ?= 8
# On kind, scenarios share the twelve slot workers (each pool on workers of its own, claimed one worker at a time,
# harness/cluster/slot_pools.py); every one of its task pods is real containers on the same two cores. On a kept
# cluster (2026-12-07): three 978.7 s (seven workers), four 863.7 s (seven), 798.3 s (ten), then with pools given back
# beside the next scenario (fe935aa) four 770.2 s (ten), five 718.8 s (twelve); still 18 % idle at five. With idle sidecars
# that stop on SIGTERM (423fe19): five 642.5 s, six 624.3 s (twelve, 10 % idle); six on fourteen workers 620.8 s, its slot
# waits 494 -> 267 s but the cores 90 % busy, so twelve stay (docs/clusters.md#kind). pytest's figures: the cluster comes before.
KIND_WORKERS ?= 6
kind_workers = $(if $(filter-out 0,$(KIND_WORKERS)),-n $(KIND_WORKERS))
# `make soak` runs at the count its 10 of 10 was measured at (docs/soak.md).
SOAK_WORKERS ?= 6
# The Generative scenario's budget: PipelineRuns drawn (new seed each session, printed with a replay command) in `make e2e`;
# `make soak` draws SOAK_GENERATIVE_RUNS a run. 0 leaves it out.
GENERATIVE_RUNS ?= 4
SOAK_GENERATIVE_RUNS ?= 12
BENCH_SCALE ?= full
# `make bench BENCH_SCHEDULER_CMD='my-scheduler --kubeconfig {kubeconfig} ...'` puts your scheduler beside the two.
export BENCH_SCHEDULER_CMD BENCH_SCHEDULER_CONFIG_TEMPLATE BENCH_SCHEDULER_LABEL

# $(call generative,N): the options that add the opt-in Generative scenario with a budget of N runs (none for 0).
generative = $(if $(filter-out 0,$(1)),--with-features=Generative --rescon-generative-runs=$(1))

PY       := $(VENV)/bin/python
PYTEST   := $(VENV)/bin/pytest
RESCON   := $(VENV)/bin/rescon
STAMP    := $(VENV)/.installed

# The Allure command line from Maven Central, fetched by Maven's repository layout, checked against the
# pinned SHA-256 and cached per user (keyed by version); it runs on the machine's Java (17 here).
ALLURE_VERSION ?= 2.32.0
ALLURE_SHA256  ?= cdfa978b3eab9cf9f52489ea9284e431d8b0d2d859bcd56a791c320e803ce65c
MAVEN_REPOSITORY ?= https://repo.maven.apache.org/maven2
ALLURE_CACHE   ?= $(HOME)/.cache/reservation-conformance/allure/$(ALLURE_VERSION)
ALLURE         := $(ALLURE_CACHE)/allure-$(ALLURE_VERSION)/bin/allure
ALLURE_RESULTS ?= $(REPORTS)/allure-results
REPORT_DIR     ?= $(REPORTS)/allure-report

.PHONY: load help venv tools bytecode unit lint report allure allure-java integration integration-kind e2e e2e-kind kind-node-image test cluster-up cluster-down clean bench mutants mutants-smoke soak scenario-seconds

help:
	@echo "make e2e          full conformance suite vs the reference scheduler (CLUSTER=local|kind), reports in $(REPORTS)/"
	@echo "make test         unit + integration + e2e on the local cluster (what CI runs)"
	@echo "make unit         pure-logic tests, no cluster"
	@echo "make integration  harness and cluster tests on the local cluster"
	@echo "make e2e-kind     the suite on kind (Docker; the offline node image is built if missing), reports in $(REPORTS)/kind/"
	@echo "make integration-kind  the simulation vocabulary on kind's real containers"
	@echo "make tools        build the local cluster's programs into the per-user cache"
	@echo "make cluster-up / cluster-down"
	@echo "make mutants      the suite against every faulty variant of the reference; kill table in docs/mutants.md"
	@echo "make soak N=10    the suite against the reference N times; flakes per scenario in docs/soak.md"
	@echo "make scenario-seconds  after make e2e: each scenario's seconds, so parallel runs start the longest first"
	@echo "make bench        reference vs kube-scheduler side by side on the local cluster, ~30 min (BENCH_SCALE=smoke: minutes;"
	@echo "                  BENCH_SCHEDULER_CMD='...' adds yours), docs/benchmarks.md and docs/benchmarks/summary.json"
	@echo "make report       one HTML file from $(REPORTS)/allure-results (the Allure command line, installed and cached; needs Java)"

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[dev,kind]'
	@touch $@

venv: $(STAMP)

tools: venv
	$(RESCON) tools

# The project's own bytecode, written once: every pytest worker and scheduler the suite starts imports it, and
# where PYTHONDONTWRITEBYTECODE is set (as on this machine) each would compile the sources again. Up-to-date
# files are skipped, so after the first run this costs a second of stat calls.
bytecode: venv
	@$(PY) -m compileall -q -j 0 harness reference_scheduler tests bench

# The Allure command line comes first (cached), so the report test renders without fetching anything.
unit: venv $(ALLURE)
	$(PYTEST) tests/unit -m unit -q -p no:randomly --timeout=120 $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

integration: venv tools bytecode
	$(PYTEST) tests/integration -m integration --timeout=900 $(PYTEST_ARGS)

# Each run starts a fresh allure-results (--clean-alluredir), so `make report` shows this run only.
e2e: venv tools bytecode
	@mkdir -p $(REPORTS)
	$(PYTEST) tests/conformance --cluster=$(CLUSTER) --timeout=900 $(if $(filter local existing,$(CLUSTER)),-n $(E2E_WORKERS),$(if $(filter kind,$(CLUSTER)),$(kind_workers))) \
		$(call generative,$(GENERATIVE_RUNS)) --report-output=$(REPORTS)/conformance-report.yaml \
		--junitxml=$(REPORTS)/junit.xml --alluredir=$(REPORTS)/allure-results --clean-alluredir $(PYTEST_ARGS)

# The suite on kind: real kubelets, containers and Tekton's own Deployments. Needs Docker; with no
# registry, `rescon kind node-image` builds the node image first (cached per user).
e2e-kind: venv tools bytecode
	@mkdir -p $(REPORTS)/kind
	$(PYTEST) tests/conformance --cluster=kind --timeout=1800 $(kind_workers) \
		--report-output=$(REPORTS)/kind/conformance-report.yaml \
		--junitxml=$(REPORTS)/kind/junit.xml --alluredir=$(REPORTS)/kind/allure-results $(PYTEST_ARGS)

integration-kind: venv tools
	RESCON_IT_KIND=1 $(PYTEST) tests/integration/test_kind_pipelines.py -m integration --timeout=1800 $(PYTEST_ARGS)

kind-node-image: venv
	$(RESCON) kind node-image

test: unit lint integration mutants-smoke e2e

# The opt-in Load scenario: fifty runs at once, 200 pods, watched by the contract monitor.
load: venv tools
	$(PYTEST) tests/conformance -k test_load --cluster=$(CLUSTER) --timeout=900 --all-features $(PYTEST_ARGS)

# Every mutant of tests/mutants/ against the whole suite, then the kill table in docs/mutants.md;
# fails if the reference fails a scenario or a mutant survives. Long, so not part of `make test`.
# Each run keeps the cluster up and uses its own schedulerName (mutant-<name>).
mutants: venv tools
	$(PY) -m tests.mutants.kill_table

# What `make test` runs: a few mutants against the scenarios that kill them in seconds.
mutants-smoke: venv tools
	$(PY) -m tests.mutants.kill_table --smoke

# After `make e2e`: the seconds each scenario took, beside the scenarios, so that parallel sessions hand out the
# longest first (harness/suite/scenario_seconds.py). Order only, never a verdict.
scenario-seconds: venv
	$(PY) -m harness.suite.scenario_seconds $(REPORTS)/junit.xml tests/conformance "make e2e at $$(git rev-parse --short HEAD), $(E2E_WORKERS) workers"

# The whole suite against the reference N times back to back: flakes per scenario in docs/soak.md.
N ?= 10
soak: venv tools
	$(PY) -m tests.soak --runs $(N) --workers $(SOAK_WORKERS) -- $(call generative,$(SOAK_GENERATIVE_RUNS))

# Never in CI: it measures, on the shared local cluster, and rewrites docs/benchmarks.md.
bench: venv tools
	BENCH_SCALE=$(BENCH_SCALE) $(PY) -m bench run
	$(PY) -m bench report

cluster-up: venv tools
	$(RESCON) cluster up

cluster-down: venv
	$(RESCON) cluster down

$(ALLURE):
	@mkdir -p $(ALLURE_CACHE)
	@echo "allure: fetching allure-commandline $(ALLURE_VERSION) into $(ALLURE_CACHE)"
	@curl -fsSL --retry 3 -o $(ALLURE_CACHE)/allure.tgz.part \
		$(MAVEN_REPOSITORY)/io/qameta/allure/allure-commandline/$(ALLURE_VERSION)/allure-commandline-$(ALLURE_VERSION).tgz
	@echo "$(ALLURE_SHA256)  $(ALLURE_CACHE)/allure.tgz.part" | sha256sum --check --quiet - \
		|| { rm -f $(ALLURE_CACHE)/allure.tgz.part; echo "allure-commandline $(ALLURE_VERSION): checksum mismatch (expected $(ALLURE_SHA256)); download discarded" >&2; exit 1; }
	@tar -xzf $(ALLURE_CACHE)/allure.tgz.part -C $(ALLURE_CACHE) && rm -f $(ALLURE_CACHE)/allure.tgz.part
	@test -x $@

# Checked before the download, so a machine without Java learns it at once.
allure-java:
	@command -v java >/dev/null 2>&1 || { test -n "$$JAVA_HOME" && test -x "$$JAVA_HOME/bin/java"; } || { echo "make report: no Java to run the Allure command line: install a Java runtime (17 runs it; Debian: apt-get install -y openjdk-17-jre-headless) or set JAVA_HOME" >&2; exit 1; }

allure: allure-java $(ALLURE)

# One self-contained HTML file (allure generate --single-file): open it from disk, no server needed.
report: allure
	@test -d $(ALLURE_RESULTS) || { echo "make report: no $(ALLURE_RESULTS): run 'make e2e' (or pytest --alluredir=$(ALLURE_RESULTS)) first" >&2; exit 1; }
	$(ALLURE) generate --single-file --clean --output $(REPORT_DIR) $(ALLURE_RESULTS)
	@echo "report: $(REPORT_DIR)/index.html ($$(du -h $(REPORT_DIR)/index.html | cut -f1))"

clean:
	rm -rf $(REPORTS) .pytest_cache .mypy_cache .hypothesis
