"""Every error the workbench raises on purpose derives from :class:`WorkbenchError`.

Each subclass carries the context a user needs (spec key, SQL line/column, the
known names) and a message that says what to do about it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class WorkbenchError(Exception):
    """Root of the workbench's errors; ``str(err)`` is meant for the user."""


MAX_KNOWN = 40  # names listed after "Known:"


def clip(text: object, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out: errors never
    echo unbounded user input."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit:,} more characters)"


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """A hint naming the closest known names, or the known names when none is close."""
    known = sorted(set(known), key=str.lower)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if not close:
        lowered = {k.lower(): k for k in known}
        close = [lowered[m] for m in difflib.get_close_matches(name.lower(), lowered, n=3)]
    shown = known[:MAX_KNOWN]
    listing = ", ".join(clip(k) for k in shown) if known else "(none)"
    if len(known) > MAX_KNOWN:
        listing += f", ... ({len(known) - MAX_KNOWN} more)"
    hint = f" Did you mean {' or '.join(close)}?" if close else ""
    return f"{hint} Known: {listing}."


class UnknownNameError(WorkbenchError):
    """A stream, table, message, field, function or plugin that does not exist."""

    def __init__(self, kind: str, name: str, known: Iterable[str], where: str = ""):
        self.kind, self.name, self.known = kind, name, sorted(set(known))
        at = f" {where}" if where else ""
        hint = did_you_mean(name, self.known)
        super().__init__(f"Unknown {kind} '{clip(name)}'{at}.{hint}")


class SpecError(WorkbenchError):
    """An invalid dagger spec; ``key`` is the dotted path of the offending key."""

    def __init__(self, key: str, message: str, source: str | None = None):
        self.key, self.source, self.message = key, source, message
        origin = f"{source}: " if source else ""
        super().__init__(f"{origin}spec key '{key}': {message}")


#: Characters of a SQL line an error shows around the fault.
SNIPPET = 100


class SqlError(WorkbenchError):
    """Dagger SQL that cannot be parsed, translated or analysed.

    ``line`` and ``column`` are 1-based positions in the SQL the user wrote.
    """

    def __init__(
        self,
        message: str,
        sql: str,
        line: int | None = None,
        column: int | None = None,
        length: int = 1,
    ):
        self.reason, self.sql, self.line, self.column = message, sql, line, column
        super().__init__(self._render(message, sql, line, column, max(length, 1)))

    @staticmethod
    def _render(message: str, sql: str, line: int | None, column: int | None, length: int) -> str:
        if line is None or column is None:
            return message
        lines = sql.splitlines() or [""]
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        start = 0
        if len(text) > SNIPPET:  # a window of the line around the fault, not all of it
            start = max(0, min(column - 1 - SNIPPET // 2, len(text) - SNIPPET))
            text = (
                ("…" if start else "")
                + text[start : start + SNIPPET]
                + "…" * (start + SNIPPET < len(text))
            )
            start -= 1 if start else 0
        offset = column - 1 - start
        pointer = " " * offset + "^" * min(length, max(len(text) - offset, 1))
        return f"{message} Line {line}, Col: {column}.\n  {text}\n  {pointer}"


class InputFileError(WorkbenchError):
    """A file or folder named on the command line that cannot be read or written."""


class ReplayInputError(WorkbenchError):
    """``replay`` flags that do not fit the SQL (a ``--table`` the SQL does not read)."""


class UnsupportedDaggerError(WorkbenchError):
    """A Dagger job uses features a spec cannot express; ``dropped`` lists every key left
    out (:class:`workbench.dagger_import.keys.Dropped`), those with ``unsupported`` in the
    message."""

    def __init__(self, source: str, dropped: list):
        self.dropped = dropped
        bad = [d for d in dropped if d.unsupported]
        listing = "".join(f"\n  {d.render()}" for d in bad)
        super().__init__(
            f"{source}: {len(bad)} key(s) cannot be carried over; the spec would emit "
            f"different rows:{listing}\nRemove them, or pass --ignore-unsupported to import "
            "without them."
        )


class SchemaError(WorkbenchError):
    """A .proto file that does not compile or a descriptor set that cannot be read."""


class BadRecordError(WorkbenchError):
    """Input records that cannot be read; ``rejects`` lists (source, line, error, raw)."""

    def __init__(self, message: str, rejects: list[dict] | None = None):
        self.rejects = rejects or []
        super().__init__(message)


class SetupError(WorkbenchError):
    """A missing tool, jar or service the workbench needs, with how to get it."""


class SinkError(WorkbenchError):
    """Rows a sink cannot write: they do not fit it, or its server refused them.

    ``sink`` names the sink (type and target); ``status`` and ``detail`` are the server's
    HTTP status and error text when the server refused the rows.
    """

    def __init__(self, sink: str, message: str, status: int | None = None, detail: str = ""):
        self.sink, self.status, self.detail = sink, status, detail
        super().__init__(f"{sink}: {message}")


class WarehouseError(WorkbenchError):
    """A warehouse table a command or the Delta sink cannot work on (not a Delta table,
    no time partitions, a Spark session started without Delta Lake), and what to do."""

    def __init__(self, path: str, message: str):
        self.path = path
        super().__init__(f"{path}: {message}")


class StreamingPlanError(WorkbenchError):
    """SQL that Spark can analyse but cannot run as a stream (found by starting the
    plan over empty inputs); ``reason`` is Spark's reason, ``hint`` what to do."""

    def __init__(self, reason: str, hint: str = ""):
        self.reason, self.hint = reason, hint
        tail = f" {hint}" if hint else ""
        super().__init__(f"The SQL cannot run as a streaming job: {reason}.{tail}")


class SparkStartError(WorkbenchError):
    """Spark did not start (or not in time) where something started it ahead of use: the
    notebook kernel's start in the background."""


class SparkConfError(WorkbenchError):
    """A spec's ``spark_conf`` names settings fixed when the session started (jars,
    memory, master) with values the running session does not have; ``differing`` maps
    each key to (the spec's value, the session's value or None when unset)."""

    def __init__(
        self, job: str, differing: dict[str, tuple[str, str | None]], shared: bool = False
    ):
        self.job, self.differing = job, differing
        keys = "; ".join(
            f"{key}={clip(want)} (the session has {clip(have) if have is not None else 'it unset'})"
            for key, (want, have) in differing.items()
        )
        if shared:
            advice = (
                "the job shares a Spark application with other jobs of its team (its cluster "
                "has jobs_per_app above 1). Run it on a cluster with jobs_per_app: 1 to set "
                "these keys, or drop them from spark_conf."
            )
        else:
            advice = (
                "a session is already running. Run the job in its own process "
                "(`workbench run SPEC.yaml`, or the job service), restart the notebook's "
                "kernel before running it, or drop these keys from spark_conf."
            )
        super().__init__(
            f"dagger '{job}': spark_conf sets {keys}, which Spark reads only when a session "
            f"starts, and {advice}"
        )


class CheckpointMismatchError(WorkbenchError):
    """A checkpoint folder that belongs to another dagger, other streams, another Kafka
    cluster or another version of the SQL; ``problems`` lists each difference."""

    def __init__(self, checkpoint: str, problems: list[str], legacy: bool = False):
        self.checkpoint, self.problems, self.legacy = checkpoint, problems, legacy
        super().__init__(
            f"checkpoint {checkpoint} cannot run this spec: {'; '.join(problems)}. "
            "A checkpoint holds one query's Kafka offsets and window state: run with "
            "--checkpoint NEW_DIR (or a new `checkpoint:` in the spec) to start this version "
            "from the streams' starting_offsets (a Parquet sink continues as a new generation "
            f"of the same table), or delete {checkpoint} to start over."
        )


class KafkaClusterChangedError(CheckpointMismatchError):
    """A checkpoint whose Kafka offsets belong to another Kafka cluster than the one the
    stream's servers answer as now (a failover, a migration, a mistyped address).
    ``changes`` lists (table, cluster id recorded, cluster id now)."""

    def __init__(self, checkpoint: str, dagger: str, changes: list[tuple[str, str, str]]):
        self.checkpoint, self.dagger, self.changes = checkpoint, dagger, changes
        self.legacy = False
        self.problems = [
            f"stream '{table}' was read from Kafka cluster {before}, its servers now answer "
            f"as cluster {now}"
            for table, before, now in changes
        ]
        what = "; ".join(self.problems)
        WorkbenchError.__init__(
            self,
            f"checkpoint {checkpoint} cannot resume on this Kafka cluster: {what}. Kafka "
            "offsets mean nothing on another cluster (resuming would skip or repeat "
            f"records). To move dagger '{dagger}' to a mirror of its topics keeping its "
            f"windows, run `workbench jobs failover {dagger} --kafka-cluster NAME` "
            "(translates the offsets); to start over on this cluster, run with "
            "--checkpoint NEW_DIR (or a new `checkpoint:` in the spec); if the servers "
            "are wrong, point the stream back at its cluster.",
        )


class KafkaUnreachableError(WorkbenchError):
    """No Kafka cluster answered at ``bootstrap``; ``reason`` is the client's own words."""

    def __init__(self, bootstrap: str, reason: str):
        self.bootstrap, self.reason = bootstrap, reason
        super().__init__(
            f"No Kafka cluster answers at {bootstrap} ({reason}). Check the servers and the "
            "security options, and that the brokers run."
        )


class SinkGenerationError(SinkError):
    """A query writing into a sink log that a newer query (checkpoint) has written since."""


class SecretError(WorkbenchError):
    """A ``${env:NAME}`` or ``${file:PATH}`` reference in a spec that cannot be resolved;
    ``reference`` is the reference's text. The message never holds a secret's value."""

    def __init__(self, reference: str, problem: str):
        self.reference = reference
        super().__init__(f"secret {reference}: {problem}")


class LeaseHeldError(WorkbenchError):
    """Another live driver holds the checkpoint's lease; ``holder`` is what it wrote there
    (pid, host, run_id, since)."""

    def __init__(self, checkpoint: str, holder: dict):
        self.checkpoint, self.holder = checkpoint, holder
        keys = ("run_id", "pid", "host", "since")
        who = ", ".join(f"{k} {holder[k]}" for k in keys if k in holder)
        super().__init__(
            f"checkpoint {checkpoint} is in use by another driver ({who or 'holder unknown'}): "
            "two drivers must never write one checkpoint. Stop that run first, or wait for "
            "it to exit."
        )


class HandoffError(WorkbenchError):
    """An old checkpoint a new version cannot continue from (no committed batch, or its
    offsets name no topic of the new spec's streams)."""


class JobServiceError(WorkbenchError):
    """A request the job service refuses; ``status`` is the HTTP status it answers with
    (400: the request itself is wrong)."""

    status = 400


class SpecRefusedError(JobServiceError):
    """A spec the job service does not store or start: ``workbench validate`` refuses it
    (``kind``: the class of validate's error, e.g. SqlError)."""

    def __init__(self, job: str, message: str, kind: str = ""):
        self.job, self.kind = job, kind
        super().__init__(
            f"{message.rstrip()}\nNothing was stored or started for job '{clip(job)}': fix the "
            "spec (`workbench validate SPEC` runs the same check)."
        )


class KafkaClusterNotFoundError(JobServiceError):
    """A Kafka cluster name the service config's ``kafka_clusters`` does not hold."""

    status = 404

    def __init__(self, name: str, known: list[str]):
        self.name = name
        where = did_you_mean(name, known) if known else " The service config has no kafka_clusters."
        super().__init__(
            f"Unknown Kafka cluster '{name}'.{where} Kafka clusters are named in the job "
            "service's config (STATE/service.yaml, key kafka_clusters)."
        )


class JobNotFoundError(JobServiceError):
    """No such job, or a job of a team the user is not in (a read answers as if it did not
    exist, so other teams' job names do not leak)."""

    status = 404

    def __init__(self, ref: object, denied: str | None = None):
        #: for the audit trail only, never in the answer: why a job that exists is hidden
        self.ref, self.denied = ref, denied
        super().__init__(
            f"No job '{clip(ref)}' that you can see. `workbench jobs list` shows your teams' "
            "jobs; ask an admin if the job belongs to another team."
        )


class JobForbiddenError(JobServiceError):
    """Work for a team (a submission, a silence) the user's teams do not allow. An action
    on another team's job is :class:`JobNotFoundError`, as a read."""

    status = 403

    def __init__(self, user: str, teams: Iterable[str], what: str, team: str):
        self.user, self.teams, self.team = user, sorted(teams), team
        mine = ", ".join(self.teams) if self.teams else "no team"
        super().__init__(
            f"User '{clip(user)}' (teams: {mine}) may not {what}: only members of team "
            f"'{clip(team)}' may. Ask an admin to add you to team '{clip(team)}' in the teams "
            "file, or ask one of its members to do it."
        )


class TeamNotFoundError(JobServiceError):
    """A team name the teams file does not hold."""

    status = 404

    def __init__(self, team: str, yours: Iterable[str], admin: bool = False):
        self.team, self.yours = team, sorted(yours)
        listed = ", ".join(clip(t) for t in self.yours[:MAX_KNOWN]) or "none"
        close = difflib.get_close_matches(team, self.yours, n=1, cutoff=0.6)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        super().__init__(
            f"no team '{clip(team)}'; {'the teams' if admin else 'your teams'}: {listed}.{hint}"
        )


class ViewerForbiddenError(JobServiceError):
    """A dashboard viewer asked the job service for something (jobs, alerts, pages)."""

    status = 403

    def __init__(self, user: str, areas: Iterable[str]):
        self.user, self.areas = user, sorted(areas)
        super().__init__(
            f"User '{clip(user)}' is a dashboard viewer (areas: {', '.join(self.areas)}): "
            "viewers see the city dashboard and nothing of the job service. Ask an admin "
            "to add you to a team in the teams file if you need jobs."
        )


class JobConflictError(JobServiceError):
    """A request that contradicts the job's state (for example a name taken by another
    team's job)."""

    status = 409


class SilenceNotFoundError(JobServiceError):
    """No silence with that id among the user's teams' silences."""

    status = 404

    def __init__(self, ref: object, denied: str | None = None):
        self.ref, self.denied = ref, denied  # denied: for the audit trail only
        super().__init__(
            f"No silence {clip(ref)} that you can see: `workbench alerts silences` lists "
            "your teams' silences."
        )


class ClusterNotFoundError(JobServiceError):
    """No Spark cluster of that name among those the user's teams may use."""

    status = 404

    def __init__(self, ref: object, known: Iterable[str] = ()):
        self.ref = ref
        super().__init__(
            f"No cluster '{clip(ref)}' that your teams may use.{did_you_mean(str(ref), known)}"
        )


class PromotionNotFoundError(JobServiceError):
    """No promotion with that id among those the user started in this Jupyter server."""

    status = 404

    def __init__(self, ref: object):
        self.ref = ref
        super().__init__(
            f"No promotion '{clip(ref)}' of yours in this Jupyter server (promotions are kept "
            "until the server restarts): promote the notebook again."
        )


class AdminOnlyError(JobServiceError):
    """An operation of the service itself (e.g. reloading its config) asked by a non-admin."""

    status = 403

    def __init__(self, user: str, what: str):
        super().__init__(
            f"User '{clip(user)}' may not {what}: only admins (the teams file's 'admins', or "
            "the owner's token) may."
        )


class ServiceRequestError(WorkbenchError):
    """The job service refused a request with an error this client has no class for;
    ``status`` is the HTTP status, ``kind`` the server's error type."""

    def __init__(self, status: int, kind: str, message: str):
        self.status, self.kind = status, kind
        super().__init__(message)


class ServiceUnreachableError(WorkbenchError):
    """No job service answers at the URL given, or the embedded one did not start."""


class PromoteError(WorkbenchError):
    """A notebook that cannot be promoted: it failed under papermill, ran no preview, or
    recorded no spec; the message says which cell or step and what to do."""


class StreamInPromoteError(PromoteError):
    """A streaming job started while ``workbench promote`` executes the notebook."""

    def __init__(self, what: str = "a streaming job"):
        super().__init__(
            f"{what} was started during promote: the stream never runs inside papermill; "
            "promote starts it in the job service. Remove the cell that starts it (the "
            "preview is all promote needs)."
        )


class ParityError(PromoteError):
    """The preview's rows differ from the production plan's over the same sample offsets;
    ``only_preview`` and ``only_replay`` hold the differing rows (up to 10 each)."""

    def __init__(self, message: str, only_preview: list[dict], only_replay: list[dict]):
        self.only_preview, self.only_replay = only_preview, only_replay
        super().__init__(message)


class NotifyError(WorkbenchError):
    """A notification a receiver did not accept: it could not be reached, or it answered
    with an error. ``receiver`` is the notifier's name, ``kind`` its type, ``where`` its
    target as configured (a URL without its query, or the secret reference standing for
    it), ``problem`` what went wrong and what to check, ``status`` the receiver's HTTP (or
    SMTP) status when it answered, ``answer`` what it said (clipped) and ``retryable``
    whether sending it again later may succeed (no answer, a timeout, 429 or a 5xx).
    :func:`workbench.notify.registry.deliver` masks every resolved secret in it."""

    def __init__(
        self,
        receiver: str,
        kind: str,
        problem: str,
        status: int | None = None,
        answer: str = "",
        retryable: bool = True,
        where: str = "",
    ):
        self.receiver, self.kind, self.problem, self.where = receiver, kind, problem, where
        self.status, self.answer, self.retryable = status, answer, retryable
        at = f" at {where}" if where else ""
        super().__init__(f"notifier '{receiver}' ({kind}{at}): {problem}")


# schema safety
class SchemaVersionError(SchemaError):
    """A schema version that is not published, or a reference that names none."""


class _ChangesError(WorkbenchError):
    """An error listing breaking :class:`workbench.schemas.compat.Change` s (``changes``,
    each saying file, line and what to do); over HTTP a 400 whose ``error.changes`` holds
    them as dicts."""

    status = 400

    def __init__(self, message: str, changes: list, advice: str):
        self.changes = changes
        lines = "\n".join(f"  {c.render()}" for c in changes)
        super().__init__(f"{message}; {len(changes)} breaking change(s):\n{lines}\n{advice}")

    def details(self) -> dict:
        """What the HTTP error body carries beside the message: each change as a dict."""
        return {"changes": [c.to_dict() for c in self.changes]}


class SchemaBreakingError(_ChangesError):
    """A job would decode its streams with a schema version that breaks the one it is
    pinned to; ``job``, ``pinned`` and ``wanted`` name the job and the two versions
    (None: the bundled schemas)."""

    def __init__(self, job: str, pinned: int | None, wanted: int | None, changes: list):
        self.job, self.pinned, self.wanted = job, pinned, wanted
        super().__init__(
            f"Job '{job}' reads messages that schema version {_named(wanted)} breaks "
            f"(it is pinned to {_named(pinned)})",
            changes,
            "Fix the schema and publish it again, or keep the job on its pinned version.",
        )


def _named(version: int | None) -> str:
    return "bundled" if version is None else str(version)


class SchemaMismatchError(WorkbenchError):
    """A job version's spec names a message, field or enum value its pinned schema
    version (``version``; None: bundled) does not have; ``cause`` is the spec or SQL error."""

    status = 400

    def __init__(self, job: str, version: int | None, cause: Exception):
        self.job, self.version, self.cause = job, version, cause
        super().__init__(
            f"Job '{job}' does not fit schema version {_named(version)}: {cause}\n"
            "Edit the spec to name what that version has, or pin the job to another "
            "version (--schema-version N; `workbench schemas versions` lists them)."
        )


class SchemaPublishError(_ChangesError):
    """A schema set that breaks the latest published version (``latest``)."""

    def __init__(self, latest: int, changes: list):
        self.latest = latest
        super().__init__(
            f"The schema set breaks schema version {latest}",
            changes,
            "Fix the schema, or publish it anyway with --allow-breaking (an admin; jobs "
            "pinned to older versions stay on them).",
        )


class SchemaForbiddenError(WorkbenchError):
    """Publishing a schema version (or a breaking one) the caller may not."""

    status = 403

    def __init__(self, user: str, breaking: bool):
        self.user = user
        who = "an admin" if breaking else "an admin or a member of a team"
        what = "a breaking schema version" if breaking else "schema versions"
        super().__init__(
            f"User '{clip(user)}' may not publish {what}: only {who} may; ask one (the "
            "teams file's admins and teams)."
        )


# quality
class QualityTopicNotFoundError(JobServiceError):
    """No quality job the caller may see measures this topic."""

    status = 404

    def __init__(self, topic: str, known: list[str]):
        self.topic = topic
        where = did_you_mean(topic, known) if known else " No quality job is visible to you."
        super().__init__(
            f"No quality job you may see measures topic '{topic}'.{where} Submit a "
            "kind: quality spec for it, or set the service config's quality.topic_pattern."
        )


# chaos


class ChaosError(WorkbenchError):
    """A chaos scenario, fault, probe or load run that cannot go on; the message says why
    and what to change (a scenario file's key, a port, a fault's name)."""
