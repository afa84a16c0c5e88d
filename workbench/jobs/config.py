"""The job service's settings: state folder, database, teams, API tokens, clusters, policy.

``$STATE/service.yaml`` (every key optional; relative paths are relative to the file)::

    database_url: postgresql+psycopg://user@host/db   # default sqlite:///$STATE/workbench.db
    teams_file: teams.yaml          # {admins: [user...], teams: {team: [user...]}}
    tokens: {TOKEN: user}           # or tokens_file: tokens.yaml
    clusters:                       # Spark clusters (docs/job-service.md)
      local: {master: "local[2]", jobs_per_app: 1}
      team-a: {master: "spark://10.0.0.5:7077", teams: [pricing], standby: team-b,
               resources: {cores: 4, executor_memory: 2g, shuffle_partitions: 8},
               conf: {spark.driver.host: 10.0.0.9}, unreachable_after_s: 10}
    kafka_clusters: {main: {bootstrap_servers: "k1:9092,k2:9092", security: {...},
                            standby: mirror, failover_after_s: 60}, mirror: {...}}
    policy: {max_failures: 5, backoff_s: 2, ...}
    notifiers: {pricing: {pricing-oncall: {type: webhook, url: "http://..."}}}  # per team
    alerting: {retry_s: 5, retry_max_s: 300, health_window_s: 60, ...}
    external_url: https://workbench.example.com/   # links in notifications

The state folder defaults to ``$WORKBENCH_HOME/service``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from workbench.exceptions import SpecError
from workbench.resources import Resources


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Policy(_Model):
    """How the supervisor treats a job's runs."""

    max_failures: int = Field(default=5, ge=1)
    backoff_s: float = Field(default=2.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    healthy_after_s: float = Field(default=60.0, ge=0)
    stop_grace_s: float = Field(default=60.0, ge=0)
    kill_grace_s: float = Field(default=10.0, ge=0)
    heartbeat_timeout_s: float = Field(default=30.0, gt=0)
    lagging_offsets: int = Field(default=100_000, ge=0)

    def backoff(self, failures: int) -> float:
        """Seconds to wait before the next attempt after ``failures`` failures in a row."""
        return min(self.backoff_s * 2 ** max(failures - 1, 0), self.backoff_max_s)


class Cluster(_Model):
    """A named Spark cluster jobs run on (docs/job-service.md): ``local[N]``, a
    standalone ``spark://host:port`` (``spark://h1:p,h2:p`` with standby masters), or
    ``yarn`` / ``k8s://https://host:443`` with their settings in ``conf``."""

    master: str = "local[2]"
    teams: list[str] | None = None  # None: every team may use it
    #: 1: each job is its own process and Spark driver. N > 1: the jobs of one team on this
    #: cluster share Spark applications, up to N streaming queries each
    #: (:mod:`workbench.jobs.hosting`: less memory and CPU a job, less isolation)
    jobs_per_app: int = Field(default=1, ge=1)
    #: a job's parallelism unless its spec's ``resources:`` says otherwise
    resources: Resources = Field(default_factory=Resources)
    #: extra Spark settings of every job on the cluster (a spec's spark_conf wins)
    conf: dict[str, str] = Field(default_factory=dict)
    #: the cluster a job moves to when this one's master stops answering
    #: (:mod:`workbench.jobs.reschedule`); None: jobs stay and back off
    standby: str | None = None
    #: seconds the master may go unanswering before its jobs move to ``standby``
    unreachable_after_s: float = Field(default=10.0, gt=0)
    description: str = ""

    @property
    def shared(self) -> bool:
        return self.jobs_per_app > 1

    def spark_conf(self) -> dict[str, str]:
        """The Spark settings a job on this cluster starts with: resources, then ``conf``."""
        return {**self.resources.spark_conf(), **self.conf}

    def may_use(self, team: str) -> bool:
        return self.teams is None or team in self.teams


class Alerting(_Model):
    """How the supervising process evaluates health rules and delivers notifications."""

    #: a failed delivery is retried after retry_s * 2^(attempts-1) s, at most retry_max_s
    retry_s: float = Field(default=5.0, gt=0)
    retry_max_s: float = Field(default=300.0, gt=0)
    #: the dispatcher looks for due notifications this often
    dispatch_s: float = Field(default=0.5, gt=0)
    #: seconds one delivery may take before it counts as failed
    timeout_s: float = Field(default=10.0, gt=0)
    #: the window over which no_data, no_sink_write and the ratios are measured
    health_window_s: float = Field(default=60.0, gt=0)
    #: hours a delivered (or silenced) notification is kept once its alert stopped firing
    retention_h: float = Field(default=120.0, gt=0)


#: security options whose value is a secret: a service config holds a reference to it only
_SECRET_KEY = re.compile(r"password|secret|jaas|token|(^|\.)key$|credentials", re.IGNORECASE)
_OPTION_KEY = re.compile(r"^[a-z][a-z0-9]*(\.[a-z0-9_-]+)*$")


class KafkaCluster(_Model):
    """A Kafka cluster jobs read (``kafka_clusters: {NAME: ...}``); a spec's
    ``streams[i].cluster: NAME`` reads through it (:mod:`workbench.jobs.kafka_clusters`)."""

    #: the cluster's brokers, ``host:port,host:port``
    bootstrap_servers: str = Field(min_length=1)
    #: Kafka client options for every connection to it (``security.protocol``,
    #: ``sasl.mechanism``, ``sasl.jaas.config``, ``ssl.truststore.location``...); a secret's
    #: value is a reference (``${env:NAME}``, ``${file:PATH}``) resolved only in the job
    security: dict[str, str] = Field(default_factory=dict)
    #: the cluster mirroring this one's topics, where its jobs fail over to
    standby: str | None = None
    #: seconds this cluster may stay unreachable before its jobs fail over to ``standby``
    failover_after_s: float = Field(default=60.0, gt=0)
    description: str = ""

    @field_validator("security")
    @classmethod
    def _by_reference(cls, value: dict[str, str]) -> dict[str, str]:
        from workbench import secrets
        from workbench.exceptions import SecretError

        for key, text in value.items():
            if not _OPTION_KEY.match(key) or key.startswith("kafka."):
                raise ValueError(
                    f"'{key}' is not a Kafka client option name (e.g. security.protocol, "
                    "sasl.jaas.config; no 'kafka.' prefix)"
                )
            try:
                found = secrets.check(text)
            except SecretError as err:
                raise ValueError(f"'{key}': {err}") from None
            if _SECRET_KEY.search(key) and not found:
                raise ValueError(
                    f"'{key}' holds a secret: write a reference to it, ${{env:NAME}} or "
                    "${file:/path} (resolved only where the job runs), not the value"
                )
        return value


class QualityAuto(_Model):
    """``quality:``: a quality job (``kind: quality``) made for each topic matching
    ``topic_pattern`` that has none yet (:mod:`workbench.quality.auto`)."""

    #: a regex; a matching topic's job is named ``name_prefix`` + the topic
    topic_pattern: str
    #: the protobuf message the topics hold
    message: str
    #: a ``kafka_clusters`` name (its bootstrap servers), or ``bootstrap_servers``
    cluster: str | None = None
    bootstrap_servers: str | None = None
    team: str = "default"
    event_timestamp_field: str = "event_timestamp"
    window: str = "10m"
    allowed_lateness: str = "30m"
    late_after: str = "1m"
    business_key: str | None = None
    #: sinks as in a spec; ``{topic}`` in a text value is the topic's name
    sinks: list[dict[str, Any]] = Field(default_factory=list)
    #: alert rules as in a spec
    alerts: list[dict[str, Any]] = Field(default_factory=list)
    #: the Spark cluster of the jobs (the team's default if unset)
    spark_cluster: str | None = None
    name_prefix: str = "quality-"
    #: how often the topics are listed
    every_s: float = Field(default=30.0, gt=0)

    @field_validator("topic_pattern")
    @classmethod
    def _regex(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as err:
            raise ValueError(f"not a valid regular expression: {err}") from None
        return value

    @model_validator(mode="after")
    def _one_address(self) -> QualityAuto:
        if bool(self.cluster) == bool(self.bootstrap_servers):
            raise ValueError("give one of 'cluster' (a kafka_clusters name) or 'bootstrap_servers'")
        return self


def _default_clusters() -> dict[str, Cluster]:
    return {"local": Cluster()}


class ServiceConfig(_Model):
    state_dir: Path
    database_url: str = ""
    teams_file: Path | None = None
    tokens: dict[str, str] = Field(default_factory=dict)
    tokens_file: Path | None = None
    clusters: dict[str, Cluster] = Field(default_factory=_default_clusters)
    kafka_clusters: dict[str, KafkaCluster] = Field(default_factory=dict)
    policy: Policy = Field(default_factory=Policy)
    #: team-wide notifiers: {team: {name: notifier config}}; a spec's own come first
    notifiers: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    alerting: Alerting = Field(default_factory=Alerting)
    #: quality jobs made automatically for new topics (none unless set)
    quality: QualityAuto | None = None
    #: the service's address in notification links (default: where it listens)
    external_url: str = ""
    heartbeat_s: float = Field(default=2.0, gt=0)
    # Internal: the supervisor's tick and the command that runs one job (the run folder is
    # appended); tests swap in a stand-in job program.
    tick_s: float = Field(default=0.5, gt=0)
    runner_command: list[str] = Field(
        default_factory=lambda: [sys.executable, "-m", "workbench.jobs.runner"]
    )
    host_command: list[str] = Field(
        default_factory=lambda: [sys.executable, "-m", "workbench.jobs.host"]
    )

    @field_validator("notifiers", mode="before")
    @classmethod
    def _team_notifiers(cls, value: Any) -> dict[str, dict[str, dict[str, Any]]]:
        from workbench.alerts.rules import NotifierProblem, check_notifiers

        if not isinstance(value, dict):
            raise ValueError("expected {team: {notifier name: {type: ..., ...}}}")
        checked = {}
        for team, named in value.items():
            try:
                checked[str(team)] = check_notifiers(named or {})
            except NotifierProblem as err:
                name, *field = err.key
                where = f" (key {'.'.join(field)})" if field else ""
                raise ValueError(f"notifier '{name}' of team '{team}'{where}: {err}") from None
        return checked

    @field_validator("clusters", "kafka_clusters")
    @classmethod
    def _standbys(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Each ``standby`` names another cluster of the same list."""
        from workbench.exceptions import did_you_mean

        for name, cluster in value.items():
            if cluster.standby is None:
                continue
            if cluster.standby == name:
                raise ValueError(f"cluster '{name}' cannot be its own standby")
            if cluster.standby not in value:
                hint = did_you_mean(cluster.standby, value)
                raise ValueError(
                    f"cluster '{name}': standby '{cluster.standby}' must name another of the "
                    f"{info.field_name} ({', '.join(sorted(value))}).{hint}"
                )
        return value

    def model_post_init(self, _context: Any) -> None:
        self.state_dir = self.state_dir.resolve()
        if not self.database_url:
            self.database_url = f"sqlite:///{self.state_dir / 'workbench.db'}"

    @classmethod
    def load(cls, state_dir: Path | None = None, config_file: Path | None = None) -> ServiceConfig:
        """The settings of the service keeping its state in ``state_dir``, read from
        ``config_file`` (default ``$STATE/service.yaml``, absent = defaults)."""
        from workbench.paths import home

        state = Path(state_dir) if state_dir else home() / "service"
        state.mkdir(parents=True, exist_ok=True)
        path = Path(config_file) if config_file else state / "service.yaml"
        data = _read(path) if path.exists() else {}
        for key in ("teams_file", "tokens_file"):
            if data.get(key):
                data[key] = path.parent / Path(data[key]).expanduser()
        try:
            return cls(state_dir=state, **data)
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"])
            raise SpecError(key, f"{first['msg']}", str(path)) from None

    def all_tokens(self) -> dict[str, str]:
        """API tokens ({token: user}) from ``tokens`` and ``tokens_file``."""
        tokens = dict(_read(self.tokens_file)) if self.tokens_file else {}
        return {**tokens, **self.tokens}

    def kafka_cluster(self, name: str) -> KafkaCluster:
        """The Kafka cluster called ``name`` (:class:`KafkaClusterNotFoundError` if none)."""
        from workbench.exceptions import KafkaClusterNotFoundError

        if name not in self.kafka_clusters:
            raise KafkaClusterNotFoundError(name, list(self.kafka_clusters))
        return self.kafka_clusters[name]

    def clusters_for(self, team: str) -> list[str]:
        """The clusters ``team`` may run jobs on."""
        return [c for c, v in self.clusters.items() if v.may_use(team)]

    def cluster(self, name: str | None) -> tuple[str, Cluster]:
        """The cluster called ``name`` (the first one when None)."""
        from workbench.exceptions import JobServiceError, did_you_mean

        if name is None:
            name = next(iter(self.clusters))
        if name not in self.clusters:
            raise JobServiceError(f"Unknown cluster '{name}'.{did_you_mean(name, self.clusters)}")
        return name, self.clusters[name]


def _read(path: Path) -> dict:
    from workbench.yamlsafe import read_yaml

    data = read_yaml(path, what="service config")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecError("(top)", "expected a YAML mapping of settings", str(path))
    return data
