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
from pydantic.json_schema import JsonDict

from workbench import secrets
from workbench.alerts.rules import NotifierProblem, check_notifiers
from workbench.exceptions import (
    JobServiceError,
    KafkaClusterNotFoundError,
    SecretError,
    SpecError,
    did_you_mean,
)
from workbench.paths import home
from workbench.resources import Resources
from workbench.urls import check_http_url
from workbench.yamlsafe import read_yaml


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Policy(_Model):
    """How the supervisor treats a job's runs."""

    max_failures: int = Field(
        default=5, ge=1, description="Failed runs in a row before the job is `FAILED`."
    )
    backoff_s: float = Field(
        default=2.0,
        ge=0,
        description="Wait before retrying: `backoff_s * 2^(failures-1)`, at most backoff_max_s.",
    )
    backoff_max_s: float = Field(
        default=60.0, ge=0, description="The longest wait before retrying."
    )
    healthy_after_s: float = Field(
        default=60.0,
        ge=0,
        description="A run alive this long and `RUNNING` clears the failure count.",
    )
    stop_grace_s: float = Field(
        default=60.0, ge=0, description="Stop: `STOP` file, then SIGTERM after this many seconds."
    )
    kill_grace_s: float = Field(
        default=10.0,
        ge=0,
        description="Seconds after SIGTERM before SIGKILL to the run's process group.",
    )
    heartbeat_timeout_s: float = Field(
        default=30.0, gt=0, description="A run silent this long is killed as hung (a failure)."
    )
    lagging_offsets: int = Field(
        default=100_000, ge=0, description="`LAGGING` above this many offsets behind the latest."
    )
    probe_timeout_s: float = Field(
        default=5.0,
        ge=0,
        description="A submit or start asks the job's Kafka clusters and Spark master this "
        "long for an answer; none: the job waits (`WAITING`) until they answer. 0: not asked.",
    )

    def backoff(self, failures: int) -> float:
        """Seconds to wait before the next attempt after ``failures`` failures in a row."""
        return min(self.backoff_s * 2 ** max(failures - 1, 0), self.backoff_max_s)


class Cluster(_Model):
    """A named Spark cluster jobs run on (docs/job-service.md): ``local[N]``, a
    standalone ``spark://host:port`` (``spark://h1:p,h2:p`` with standby masters), or
    ``yarn`` / ``k8s://https://host:443`` with their settings in ``conf``."""

    master: str = Field(
        default="local[2]", description="`local[N]`, `spark://host:port`, `yarn`, `k8s://...`."
    )
    teams: list[str] | None = Field(
        default=None, description="The teams that may use it (unset: every team)."
    )
    jobs_per_app: int = Field(
        default=1,
        ge=1,
        description="1: each job is its own process and Spark driver. N > 1: the jobs of one "
        "team on this cluster share Spark applications, up to N streaming queries each "
        "(`workbench.jobs.hosting`: less memory and CPU a job, less isolation).",
    )
    resources: Resources = Field(
        default_factory=Resources,
        description="A job's parallelism unless its spec's `resources:` says otherwise.",
    )
    conf: dict[str, str] = Field(
        default_factory=dict,
        description="Extra Spark settings of every job on the cluster (a spec's spark_conf wins).",
    )
    standby: str | None = Field(
        default=None,
        description="The cluster a job moves to when this one's master stops answering "
        "(`workbench.jobs.reschedule`); unset: jobs stay and back off.",
    )
    unreachable_after_s: float = Field(
        default=10.0,
        gt=0,
        description="Seconds the master may go unanswering before its jobs move to `standby`.",
    )
    description: str = Field(default="", description="Free text.")

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

    retry_s: float = Field(
        default=5.0,
        gt=0,
        description="A failed delivery is retried after retry_s * 2^(attempts-1) s, at most "
        "retry_max_s.",
    )
    retry_max_s: float = Field(default=300.0, gt=0, description="The longest retry wait.")
    dispatch_s: float = Field(
        default=0.5, gt=0, description="The dispatcher looks for due notifications this often."
    )
    timeout_s: float = Field(
        default=10.0, gt=0, description="Seconds one delivery may take before it fails."
    )
    health_window_s: float = Field(
        default=60.0,
        gt=0,
        description="The window over which no_data, no_sink_write and the ratios are measured.",
    )
    resolve_timeout_s: float = Field(
        default=300.0,
        gt=0,
        description="A metric rule's alerts still firing resolve once the job read no "
        "micro-batch for this long (its input stopped); a stopped job's resolve at once "
        "(Alertmanager's resolve_timeout, 5 minutes).",
    )
    retention_h: float = Field(
        default=120.0,
        gt=0,
        description="Hours a delivered (or silenced) notification is kept once its alert "
        "stopped firing.",
    )


#: security options whose value is a secret: a service config holds a reference to it only
_SECRET_KEY = re.compile(r"password|secret|jaas|token|(^|\.)key$|credentials", re.IGNORECASE)
_OPTION_KEY = re.compile(r"^[a-z][a-z0-9]*(\.[a-z0-9_-]+)*$")


class KafkaCluster(_Model):
    """A Kafka cluster jobs read (``kafka_clusters: {NAME: ...}``); a spec's
    ``streams[i].cluster: NAME`` reads through it (:mod:`workbench.jobs.kafka_clusters`)."""

    bootstrap_servers: str = Field(
        min_length=1, description="The cluster's brokers, `host:port,host:port`."
    )
    security: dict[str, str] = Field(
        default_factory=dict,
        description="Kafka client options for every connection to it (`security.protocol`, "
        "`sasl.mechanism`, `sasl.jaas.config`, `ssl.truststore.location`...); a secret's "
        "value is a reference (`${env:NAME}`, `${file:PATH}`) resolved only in the job.",
    )
    standby: str | None = Field(
        default=None,
        description="The cluster mirroring this one's topics, where its jobs fail over to.",
    )
    failover_after_s: float = Field(
        default=60.0,
        gt=0,
        description="Seconds this cluster may stay unreachable before its jobs fail over to "
        "`standby`.",
    )
    description: str = Field(default="", description="Free text.")

    @field_validator("security")
    @classmethod
    def _by_reference(cls, value: dict[str, str]) -> dict[str, str]:

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

    topic_pattern: str = Field(
        description="A regex; a matching topic's job is named `name_prefix` + the topic."
    )
    message: str = Field(description="The protobuf message the topics hold.")
    cluster: str | None = Field(
        default=None,
        description="A `kafka_clusters` name (its bootstrap servers), or `bootstrap_servers`.",
    )
    bootstrap_servers: str | None = Field(default=None, description="The topics' brokers.")
    team: str = Field(default="default", description="The team owning the jobs.")
    event_timestamp_field: str = Field(
        default="event_timestamp", description="The messages' event time field."
    )
    window: str = Field(default="10m", description="Event-time window.")
    allowed_lateness: str = Field(
        default="30m",
        description="How far behind the largest event time seen a window still takes records.",
    )
    late_after: str = Field(
        default="1m", description="A record published more than this after its event time is late."
    )
    business_key: str | None = Field(
        default=None, description="A message field; duplicates by it are counted too."
    )
    sinks: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Sinks as in a spec; `{topic}` in a text value is the topic's name.",
    )
    alerts: list[dict[str, Any]] = Field(
        default_factory=list, description="Alert rules as in a spec."
    )
    spark_cluster: str | None = Field(
        default=None, description="The Spark cluster of the jobs (unset: the team's default)."
    )
    name_prefix: str = Field(default="quality-", description="The jobs' name prefix.")
    every_s: float = Field(default=30.0, gt=0, description="How often the topics are listed.")

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


#: Marks the keys of :class:`ServiceConfig` that are not a ``service.yaml`` key of users
#: (the state folder is the file's own; tests swap in a stand-in job program).
INTERNAL: JsonDict = {"internal": True}


class ServiceConfig(_Model):
    state_dir: Path = Field(description="The state folder.", json_schema_extra=INTERNAL)
    database_url: str = Field(
        default="",
        description="SQLAlchemy URL of the service's database (unset: "
        "`sqlite:///STATE/workbench.db`).",
    )
    teams_file: Path | None = Field(
        default=None,
        description="YAML `{admins: [user...], teams: {team: [user...]}, "
        "viewers: {user: [area...]}}` (unset: single-user mode).",
    )
    tokens: dict[str, str] = Field(
        default_factory=dict, description="API tokens of `workbench serve`: `{token: user}`."
    )
    tokens_file: Path | None = Field(
        default=None, description="API tokens `{token: user}` from a YAML file."
    )
    clusters: dict[str, Cluster] = Field(
        default_factory=_default_clusters,
        description="The Spark clusters jobs run on, by name.",
        json_schema_extra={"shown_default": "`{local: {master: local[2]}}`"},
    )
    kafka_clusters: dict[str, KafkaCluster] = Field(
        default_factory=dict, description="The Kafka clusters jobs read, by name."
    )
    policy: Policy = Field(default_factory=Policy, description="How the supervisor treats runs.")
    notifiers: dict[str, dict[str, dict[str, Any]]] = Field(
        default_factory=dict,
        description="Team-wide notifiers: {team: {name: notifier config}}; a spec's own "
        "come first.",
    )
    alerting: Alerting = Field(
        default_factory=Alerting, description="Health rules and notification delivery."
    )
    quality: QualityAuto | None = Field(
        default=None,
        description="Quality jobs made automatically for new topics (none unless set).",
    )
    external_url: str = Field(
        default="",
        description="The service's public URL, as people open it (e.g. behind a proxy or "
        "JupyterHub): notifications link to it (`externalURL`, each alert's job page). "
        "Unset: notifications carry no links.",
    )
    heartbeat_s: float = Field(
        default=2.0, gt=0, description="How often a job process writes its heartbeat."
    )
    # Internal: the supervisor's tick and the command that runs one job (the run folder is
    # appended); tests swap in a stand-in job program.
    tick_s: float = Field(default=0.5, gt=0, json_schema_extra=INTERNAL)
    runner_command: list[str] = Field(
        default_factory=lambda: [sys.executable, "-m", "workbench.jobs.runner"],
        json_schema_extra=INTERNAL,
    )
    host_command: list[str] = Field(
        default_factory=lambda: [sys.executable, "-m", "workbench.jobs.host"],
        json_schema_extra=INTERNAL,
    )
    # the command checking a spec as `workbench validate` does before a submit, an edit or
    # a start (the spec on its standard input); empty: names and schemas only, no Spark
    validate_command: list[str] = Field(
        default_factory=lambda: [sys.executable, "-m", "workbench.jobs.spec_check"],
        json_schema_extra=INTERNAL,
    )

    @field_validator("notifiers", mode="before")
    @classmethod
    def _team_notifiers(cls, value: Any) -> dict[str, dict[str, dict[str, Any]]]:

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

    @field_validator("external_url")
    @classmethod
    def _public_url(cls, value: str) -> str:
        return check_http_url(value) if value else value

    @field_validator("clusters", "kafka_clusters")
    @classmethod
    def _standbys(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Each ``standby`` names another cluster of the same list."""

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

        if name not in self.kafka_clusters:
            raise KafkaClusterNotFoundError(name, list(self.kafka_clusters))
        return self.kafka_clusters[name]

    def clusters_for(self, team: str) -> list[str]:
        """The clusters ``team`` may run jobs on."""
        return [c for c, v in self.clusters.items() if v.may_use(team)]

    def cluster(self, name: str | None) -> tuple[str, Cluster]:
        """The cluster called ``name`` (the first one when None)."""

        if name is None:
            name = next(iter(self.clusters))
        if name not in self.clusters:
            raise JobServiceError(f"Unknown cluster '{name}'.{did_you_mean(name, self.clusters)}")
        return name, self.clusters[name]


def _read(path: Path) -> dict:

    data = read_yaml(path, what="service config")
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecError("(top)", "expected a YAML mapping of settings", str(path))
    return data
