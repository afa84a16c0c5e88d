"""Alert state in the job service's database, kept by the supervising process every tick.

For each job with alert rules, :meth:`AlertStore.tick`:

1. ingests the new lines of its latest run's ``alerts.jsonl`` (the job's observations of
   its metric rules, one line per micro-batch): a batch id at or below the rule's cursor
   for that checkpoint (a batch replayed after a restart) is skipped;
2. measures its health (:mod:`workbench.alertmanager.health`) and steps every health rule at
   the tick's wall clock;
3. resolves the metric rules' alerts still firing when no point will come to resolve
   them: the job is stopped (after its last lines), or its runs wrote no line (read no
   micro-batch) for ``alerting.resolve_timeout_s`` (:meth:`Evaluator.expire
   <workbench.alerts.state.Evaluator.expire>`, at the tick's wall clock);
4. runs them through the state machine (:class:`~workbench.alerts.state.Evaluator`,
   its state persisted per rule in ``alert_cursors``) and, for each transition, updates
   ``alerts``, adds to ``alert_events`` and puts one outbox row per receiver.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.alertmanager import health, outbox
from workbench.alertmanager.rulebook import JobRules, RuleBook
from workbench.alerts.state import Evaluator, Transition
from workbench.jobs.alert_tables import AlertCursor, AlertEvent, AlertRow
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database, Job, Run, each_job, now
from workbench.jobs.rundir import RunDir
from workbench.jobs.views import heartbeat, latest_run, live_run

LOG = logging.getLogger(__name__)
#: a rule's state is written at least this often (seconds) while only its times move
SAVE_EVERY_S = 30.0


class AlertStore:
    def __init__(self, config: ServiceConfig, db: Database, book: RuleBook):
        self.config, self.db, self.book = config, db, book
        self.health = health.HealthWatch(config.alerting.health_window_s)
        self._evaluators: dict[int, tuple[int, Evaluator]] = {}
        self._seen: dict[str, tuple[int, int]] = {}  # run id: (mtime_ns, size) ingested
        self._saved: dict[tuple[str, str], tuple[str, float]] = {}  # (job, rule): (mark, when)
        self._observed: dict[int, float] = {}  # job id: wall clock of its runs' last line

    def tick(self) -> None:
        """One pass over every job (one job's trouble never stops the others)."""
        for job_id in each_job(self.db, self.update, "alerts"):
            self._evaluators.pop(job_id, None)  # its state is the database's again
            self._observed.pop(job_id, None)
            self._seen.clear()
            self._saved.clear()

    def update(self, s: Session, job: Job, at: float | None = None) -> list[Transition]:
        """Ingest and evaluate ``job``'s rules now (``at``, epoch s); the transitions."""
        rules = self.book.of(s, job)
        cached = self._evaluators.get(job.id)
        if cached is None or cached[0] != rules.version:
            self.retire(s, job, rules)
        if not rules.rules:
            self._evaluators[job.id] = (rules.version, Evaluator([], job.name))
            return []
        cursors = self._cursors(s, job, rules)
        evaluator = self._evaluator(job, rules, cursors)
        fed, found = False, list[Transition]()
        run = latest_run(s, job.id)
        clock = time.time() if at is None else at
        if rules.metric and run is not None:
            fed, found = self._ingest(run, rules, evaluator, cursors)
        if rules.metric:
            found += self._expire(s, job, rules, evaluator, cursors, clock, fed)
        if rules.health:
            found += self._health(s, job, rules, evaluator, clock)
        self.record(s, job, rules, found)
        self._save(rules, evaluator, cursors, fed)
        return found

    def _expire(
        self,
        s: Session,
        job: Job,
        rules: JobRules,
        ev: Evaluator,
        cursors: dict[str, AlertCursor],
        clock: float,
        fed: bool,
    ) -> list[Transition]:
        """Resolve the metric rules' firing alerts of a stopped job, or of one whose runs
        wrote no line for ``resolve_timeout_s`` (the line's wall clock kept per rule)."""
        names = [r.name for r in rules.metric]
        if fed or job.id not in self._observed:
            seen = [x for n in names if (x := _observed_at(cursors[n])) is not None]
            self._observed[job.id] = clock if fed else max(seen, default=clock)
        stopped = job.desired != "running" and live_run(s, job.id) is None
        idle = clock - self._observed[job.id] >= self.config.alerting.resolve_timeout_s
        if not (stopped or idle):
            return []
        return [t for name in names for t in ev.expire(name, int(clock * 1000))]

    # -- the state machine, persisted ---------------------------------------------------
    @staticmethod
    def _cursors(s: Session, job: Job, rules: JobRules) -> dict[str, AlertCursor]:
        """Each rule's cursor row (made for a new rule)."""
        query = select(AlertCursor).where(AlertCursor.job_id == job.id)
        cursors = {c.rule: c for c in s.scalars(query)}
        for rule in rules.rules:
            if rule.name not in cursors:
                cursors[rule.name] = AlertCursor(
                    job_id=job.id, rule=rule.name, checkpoint="", state_json="{}"
                )
                s.add(cursors[rule.name])
        return cursors

    def _evaluator(self, job: Job, rules: JobRules, cursors: dict[str, AlertCursor]) -> Evaluator:
        cached = self._evaluators.get(job.id)
        if cached is not None and cached[0] == rules.version:
            return cached[1]
        data: dict[str, Any] = {"states": {}, "last_at": {}}
        for cursor in cursors.values():
            saved = json.loads(cursor.state_json or "{}")
            data["states"].update(saved.get("states") or {})
            data["last_at"].update(saved.get("last_at") or {})
        evaluator = Evaluator.from_dict(list(rules.rules), job.name, data)
        self._evaluators[job.id] = (rules.version, evaluator)
        return evaluator

    def _save(
        self, rules: JobRules, ev: Evaluator, cursors: dict[str, AlertCursor], fed: bool
    ) -> None:
        """Persist each rule's state: a metric rule's when it was ``fed`` observations, a
        health rule's when a status changed or every :data:`SAVE_EVERY_S` (its last point
        moves every tick, not worth a write each time)."""
        clock = time.monotonic()
        for rule in rules.rules:
            states = {fp: st for fp, st in ev.states.items() if st.rule == rule.name}
            key = (ev.job, rule.name)
            mark = json.dumps(sorted((fp, st.status, st.active_since) for fp, st in states.items()))
            saved = self._saved.get(key)
            fresh = saved is not None and saved[0] == mark and clock - saved[1] < SAVE_EVERY_S
            if fresh and not (fed and rule.rule_kind.in_job):
                continue
            last = {rule.name: ev.last_at[rule.name]} if rule.name in ev.last_at else {}
            data = {"states": {fp: st.to_dict() for fp, st in states.items()}, "last_at": last}
            if rule.rule_kind.in_job and rules.job_id in self._observed:
                data["observed_at"] = self._observed[rules.job_id]
            text = json.dumps(data, sort_keys=True, default=str)
            if cursors[rule.name].state_json != text:
                cursors[rule.name].state_json = text
            self._saved[key] = (mark, clock)

    # -- metric rules: the job's observations ------------------------------------------
    def _ingest(
        self, run: Run, rules: JobRules, ev: Evaluator, cursors: dict[str, AlertCursor]
    ) -> tuple[bool, list[Transition]]:
        """Whether new lines were read, and the transitions they caused."""
        lines = self._new_lines(run, rules, cursors)
        names = [r.name for r in rules.metric]
        out: list[Transition] = []
        for line in lines:
            checkpoint, batch = str(line.get("checkpoint") or ""), int(line["batch_id"])
            for obs in line.get("observations") or []:
                cursor = cursors.get(obs.get("rule"))
                if obs.get("rule") not in names or _done(cursor, checkpoint, batch):
                    continue
                out += ev.step(obs["rule"], int(obs["at"]), obs.get("firing") or {})
            for name in names:
                cursors[name].checkpoint, cursors[name].batch_id = checkpoint, batch
        return bool(lines), out

    def _new_lines(
        self, run: Run, rules: JobRules, cursors: dict[str, AlertCursor]
    ) -> list[dict[str, Any]]:
        """The lines of the run's ``alerts.jsonl`` after the rules' cursors, oldest first
        (the file is rewritten to its last lines as it grows: it is read from its end)."""
        path = RunDir(run.run_dir).alerts_file
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return []
        mark = (stat.st_mtime_ns, stat.st_size)
        if self._seen.get(run.run_id) == mark:
            return []
        text = path.read_text(encoding="utf-8")
        self._seen[run.run_id] = mark
        found: list[dict[str, Any]] = []
        floor: int | None = None
        for raw in reversed(text.splitlines()):
            try:
                line = json.loads(raw)
                batch = int(line["batch_id"])
            except (ValueError, KeyError, TypeError):
                continue  # a line being written, or not ours
            if floor is None:
                floor = _floor(rules, cursors, str(line.get("checkpoint") or ""))
            if batch <= floor:
                break
            found.append(line)
        return found[::-1]

    # -- health rules --------------------------------------------------------------------
    def _health(
        self, s: Session, job: Job, rules: JobRules, ev: Evaluator, at: float
    ) -> list[Transition]:
        run = live_run(s, job.id)
        values = self.health.measure(job, run, heartbeat(run), at)
        out: list[Transition] = []
        for rule in rules.health:
            out += ev.step(rule.name, int(at * 1000), health.observe(rule, job, values))
        return out

    @staticmethod
    def retire(s: Session, job: Job, rules: JobRules) -> None:
        """Resolve the job's firing alerts whose rule its current version no longer has
        (recorded in the history; no notification: the rule and its receivers are gone),
        and forget that rule's state (the rule added again starts afresh)."""
        names = {r.name for r in rules.rules}
        for cursor in s.scalars(select(AlertCursor).where(AlertCursor.job_id == job.id)):
            if cursor.rule not in names:
                s.delete(cursor)
        query = select(AlertRow).where(AlertRow.job_id == job.id, AlertRow.status == "firing")
        for row in s.scalars(query):
            if row.rule not in names:
                row.status, row.ends_at = "resolved", now()
                s.add(
                    AlertEvent(
                        fingerprint=row.fingerprint,
                        job_id=job.id,
                        rule=row.rule,
                        labels_json=row.labels_json,
                        status="resolved",
                        at=row.ends_at,
                        values_json=json.dumps({"rule": "removed"}),
                    )
                )

    # -- transitions into alerts, history and the outbox ---------------------------------
    def record(self, s: Session, job: Job, rules: JobRules, found: list[Transition]) -> None:
        if not found:
            return
        link = outbox.base_url(self.config)
        for t in found:
            rule = rules.rule(t.rule)
            if rule is None:
                continue
            row = self._alert_row(s, job, t)
            s.add(
                AlertEvent(
                    fingerprint=t.fingerprint,
                    job_id=job.id,
                    rule=t.rule,
                    labels_json=json.dumps(t.labels, sort_keys=True),
                    status=t.status,
                    at=outbox.moment(t.at),
                    values_json=json.dumps(t.values, default=str),
                )
            )
            alert = outbox.make_alert(
                job, rule, t.fingerprint, t.labels, t.status, row.starts_at, row.ends_at,
                t.values, link,
            )  # fmt: skip
            outbox.enqueue(s, job, rule, alert, link, rule.notify)

    @staticmethod
    def _alert_row(s: Session, job: Job, t: Transition) -> AlertRow:
        row = s.get(AlertRow, t.fingerprint)
        if row is None:
            row = AlertRow(
                fingerprint=t.fingerprint,
                job_id=job.id,
                team=job.team,
                rule=t.rule,
                labels_json=json.dumps(t.labels, sort_keys=True),
            )
            s.add(row)
        row.status = t.status
        row.starts_at = outbox.moment(t.starts_at)  # type: ignore[assignment]
        row.ends_at = outbox.moment(t.ends_at) if t.status == "resolved" else None
        row.last_value_json = json.dumps(t.values, default=str)
        return row


def _observed_at(cursor: AlertCursor) -> float | None:
    """The wall clock (epoch s) of the last line ingested for the cursor's rule, if kept."""
    found = json.loads(cursor.state_json or "{}").get("observed_at")
    return float(found) if isinstance(found, (int, float)) else None


def _done(cursor: AlertCursor | None, checkpoint: str, batch: int) -> bool:
    """Whether ``batch`` of ``checkpoint`` was ingested for the cursor's rule already."""
    if cursor is None or cursor.batch_id is None or cursor.checkpoint != checkpoint:
        return False
    return batch <= cursor.batch_id


def _floor(rules: JobRules, cursors: dict[str, AlertCursor], checkpoint: str) -> int:
    """The lowest batch id every metric rule has ingested from ``checkpoint`` (-1: none)."""
    marks = []
    for rule in rules.metric:
        cursor = cursors.get(rule.name)
        done = (
            cursor is not None and cursor.checkpoint == checkpoint and cursor.batch_id is not None
        )
        marks.append(cursor.batch_id if done and cursor and cursor.batch_id is not None else -1)
    return min(marks, default=-1)
