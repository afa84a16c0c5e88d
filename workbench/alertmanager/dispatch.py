"""The dispatcher: a thread of the supervising process that delivers the outbox.

Every ``alerting.dispatch_s`` it finds the groups (one rule of one job; receiver) with a
pending row due, and hands each to a worker; one receiver has at most one delivery in
flight, so a slow or dead receiver holds up only its own notifications, never ingestion
(the supervisor's thread) nor the other receivers. A group is sent as one
:class:`~workbench.notify.registry.Notification` of all its alerts, firing and resolved
together, with the group's status and Alertmanager's reason (:mod:`.flush`, which also
applies silences).

Delivered rows are ``sent``. A failure (the receiver down, an error answer, an unknown
notifier name) keeps the rows pending, due again after ``retry_s * 2^(attempts-1)``
seconds (at most ``retry_max_s``; a failure that cannot pass by itself, such as a 4xx
answer or an unknown name, after ``retry_max_s``, so a fixed config is picked up), with
the error in ``last_error``: nothing is dropped.

Every ``REPEAT_EVERY_S`` it also re-notifies groups still firing: after the rule's
``repeat_interval`` since the group's last delivery, and an alert once a silence that
muted it ended.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.alertmanager import outbox, silences
from workbench.alertmanager.flush import flush
from workbench.alertmanager.rulebook import RuleBook
from workbench.exceptions import NotifyError, did_you_mean
from workbench.jobs.alert_tables import PENDING, SENT, SILENCED, AlertRow, OutboxRow
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database, Job, now
from workbench.notify.registry import NOTIFIERS, deliver

LOG = logging.getLogger(__name__)
REPEAT_EVERY_S = 5.0
PRUNE_EVERY_S = 3600.0
WORKERS = 8


class Dispatcher:
    def __init__(self, config: ServiceConfig, db: Database, book: RuleBook):
        self.config, self.db, self.book = config, db, book
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._busy: set[tuple[str, str]] = set()  # (team, receiver) with a send in flight
        self._busy_lock = threading.Lock()
        self._repeated_at = self._pruned_at = 0.0

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stopping.clear()
        self._pool = ThreadPoolExecutor(WORKERS, thread_name_prefix="workbench-notify")
        self._thread = threading.Thread(target=self._loop, name="workbench-dispatch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                self.run_once()
            except Exception:
                LOG.exception("dispatching notifications")
            self._stopping.wait(self.config.alerting.dispatch_s)

    def run_once(self, wait: bool = False) -> None:
        """Queue repeats when due, and hand every due group to a worker (``wait``: send
        them in this thread instead, one after another)."""
        moment = now().timestamp()
        if moment - self._repeated_at >= REPEAT_EVERY_S:
            self._repeated_at = moment
            with self.db.session() as s:
                self.repeat(s)
                if moment - self._pruned_at >= PRUNE_EVERY_S:
                    self._pruned_at = moment
                    outbox.prune(s, self.config.alerting.retention_h)
        with self.db.session() as s:
            groups = outbox.due_groups(s)
        for team, receiver, job_id, rule in groups:
            if wait or self._pool is None:
                self.send_group(receiver, job_id, rule)
                continue
            with self._busy_lock:
                if (team, receiver) in self._busy:
                    continue
                self._busy.add((team, receiver))
            self._pool.submit(self._work, team, receiver, job_id, rule)

    def _work(self, team: str, receiver: str, job_id: int, rule: str) -> None:
        try:
            self.send_group(receiver, job_id, rule)
        except Exception:
            LOG.exception("notifying %s of rule %s of job %s", receiver, rule, job_id)
        finally:
            with self._busy_lock:
                self._busy.discard((team, receiver))

    # -- one group ------------------------------------------------------------------------
    def send_group(self, receiver: str, job_id: int, rule: str) -> bool | None:
        """Deliver one group's notification to ``receiver``: True when delivered, False
        when it failed (retried later), None when there was nothing to send."""
        link = outbox.base_url(self.config)
        with self.db.session() as s:
            job = s.get(Job, job_id)
            rules = self.book.of(s, job) if job is not None else None
            spec = rules.rule(rule) if rules is not None else None
            found = flush(s, job, spec, outbox.group_rows(s, receiver, job_id, rule), link)
            if found is None:
                return None
            ids, waiting = [r.id for r in found.rows], [r.id for r in found.waiting]
            config = self.book.receiver(rules, receiver) if rules is not None else None
            known = self.book.receivers(rules) if rules is not None else []
            name = job.name if job is not None else str(job_id)
            note = found.notification(receiver, f"{name}/{rule}", link)
        try:
            self._deliver(receiver, config, known, note)
        except Exception as err:
            retryable = bool(getattr(err, "retryable", True))
            with self.db.session() as s:
                delay = outbox.mark_failed(s, ids, str(err), self.config, retryable)
                later = now() + timedelta(seconds=delay)
                outbox.postpone(outbox.rows(s, waiting), later)
            LOG.warning("notifying %s failed, again in %.0f s: %s", receiver, delay, err)
            return False
        with self.db.session() as s:
            outbox.mark_sent(s, ids)
        return True

    def _deliver(self, receiver: str, config: dict | None, known: list[str], note: Any) -> None:

        if config is None:
            raise NotifyError(
                receiver,
                "unknown",
                "no notifier of this name in the job's spec nor in its team's service "
                "config; add it there and the notification is sent."
                + did_you_mean(receiver, known),
                retryable=False,
            )
        deliver(NOTIFIERS.config(config), note, self.config.alerting.timeout_s)

    # -- repeats --------------------------------------------------------------------------
    def repeat(self, s: Session) -> None:
        """Queue a firing notification again, per receiver, for the alerts of each group
        still firing whose last delivery was ``repeat_interval`` ago, and for an alert a
        silence muted once it ended. A few queries whatever the number of alerts."""
        link = outbox.base_url(self.config)
        last, sent = outbox.last_firing_rows(s), outbox.last_sent(s)
        groups: dict[tuple[int, str], list[AlertRow]] = {}
        for row in s.scalars(select(AlertRow).where(AlertRow.status == "firing")):
            groups.setdefault((row.job_id, row.rule), []).append(row)
        muting: dict[str, list] = {}
        for (job_id, name), rows in groups.items():
            job = s.get(Job, job_id)
            rule = self.book.of(s, job).rule(name) if job is not None else None
            if job is None or rule is None:
                continue
            if job.team not in muting:
                muting[job.team] = silences.active(s, job.team)
            muted = {
                r.fingerprint
                for r in rows
                if silences.silenced(muting[job.team], name,
                                     {**json.loads(r.labels_json or "{}"), "job": job.name})
            }  # fmt: skip
            for receiver in rule.notify:
                marks = {r.fingerprint: last.get((r.fingerprint, receiver)) for r in rows}
                since = sent.get((job_id, name, receiver))
                for row in _due(rows, marks, muted, since, rule.repeat_interval_ms):
                    labels = json.loads(row.labels_json or "{}")
                    values = json.loads(row.last_value_json or "{}")
                    alert = outbox.make_alert(
                        job, rule, row.fingerprint, labels, "firing", row.starts_at, None,
                        values, link,
                    )  # fmt: skip
                    outbox.enqueue(s, job, rule, alert, link, [receiver])


def _due(
    rows: list[AlertRow],
    marks: dict[str, OutboxRow | None],
    muted: set[str],
    since: datetime | None,
    repeat_ms: int,
) -> list[AlertRow]:
    """The firing alerts of one group to notify a receiver of again, given each one's
    newest firing row for it (``marks``) and when the group was last delivered there."""
    last = {fp: m.status for fp, m in marks.items() if m is not None}
    if PENDING in last.values():
        return []  # a notification of the group is on its way: it carries them all
    loud = [r for r in rows if r.fingerprint not in muted]
    ended = [r for r in loud if last.get(r.fingerprint) == SILENCED]
    told = [r for r in loud if last.get(r.fingerprint) == SENT]
    if told and since is not None and now() - since >= timedelta(milliseconds=repeat_ms):
        return ended + told
    return ended
