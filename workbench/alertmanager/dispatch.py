"""The dispatcher: a thread of the supervising process that delivers the outbox.

Every ``alerting.dispatch_s`` it finds the groups (job, rule, firing or resolved;
receiver) with a pending row due, and hands each to a worker; one receiver has at most
one delivery in flight, so a slow or dead receiver holds up only its own notifications,
never ingestion (the supervisor's thread) nor the other receivers. A group is sent as one
:class:`~workbench.notify.registry.Notification` of all its pending alerts, after:

- silences: an alert a silence of its team mutes is not sent (its row: ``silenced``);
- resolved alerts whose firing notification never reached the receiver (silenced) are
  not sent either (``skipped``); one whose firing notification is still pending waits.

Delivered rows are ``sent``. A failure (the receiver down, an error answer, an unknown
notifier name) keeps the rows pending, due again after ``retry_s * 2^(attempts-1)``
seconds (at most ``retry_max_s``; a failure that cannot pass by itself, such as a 4xx
answer or an unknown name, after ``retry_max_s``, so a fixed config is picked up), with
the error in ``last_error``: nothing is dropped.

Every ``REPEAT_EVERY_S`` it also re-notifies alerts still firing: after the rule's
``repeat_interval`` since the last delivery, or once a silence that muted them ended.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from workbench.alertmanager import outbox, silences
from workbench.alertmanager.rulebook import RuleBook
from workbench.exceptions import NotifyError, did_you_mean
from workbench.jobs.alert_tables import PENDING, SENT, SILENCED, SKIPPED, AlertRow, OutboxRow
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database, Job, now
from workbench.notify.registry import NOTIFIERS, Notification, deliver

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
        for team, receiver, key in groups:
            if wait or self._pool is None:
                self.send_group(receiver, key)
                continue
            with self._busy_lock:
                if (team, receiver) in self._busy:
                    continue
                self._busy.add((team, receiver))
            self._pool.submit(self._work, team, receiver, key)

    def _work(self, team: str, receiver: str, key: str) -> None:
        try:
            self.send_group(receiver, key)
        except Exception:
            LOG.exception("notifying %s of group %s", receiver, key)
        finally:
            with self._busy_lock:
                self._busy.discard((team, receiver))

    # -- one group ------------------------------------------------------------------------
    def send_group(self, receiver: str, key: str) -> bool | None:
        """Deliver the pending rows of one group to ``receiver``: True when delivered,
        False when it failed (retried later), None when there was nothing to send."""
        with self.db.session() as s:
            rows = self._sendable(s, outbox.group_rows(s, receiver, key))
            if not rows:
                return None
            ids = [r.id for r in rows]
            job = s.get(Job, rows[0].job_id)
            config = self.book.receiver(self.book.of(s, job), receiver) if job else None
            known = self.book.receivers(self.book.of(s, job)) if job else []
            note = _notification([outbox.payload(r) for r in rows])
        try:
            self._deliver(receiver, config, known, note)
        except Exception as err:
            retryable = bool(getattr(err, "retryable", True))
            with self.db.session() as s:
                delay = outbox.mark_failed(s, ids, str(err), self.config, retryable)
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

    def _sendable(self, s: Session, rows: list[OutboxRow]) -> list[OutboxRow]:
        """The rows to send now; silenced and needless ones are marked, a resolved row
        whose firing notification is still pending waits."""
        if not rows:
            return []
        muting = silences.active(s, rows[0].team)
        out = []
        for row in rows:
            alert = outbox.payload(row)["alerts"][0]
            labels = {**alert.get("labels", {}), "job": alert.get("job", "")}
            if (found := silences.silenced(muting, row.rule, labels)) is not None:
                row.status, row.last_error = SILENCED, f"silence {found.id}"
                continue
            if row.kind == "resolved":
                firing = outbox.last_firing(s, row.fingerprint, row.receiver, before=row.id)
                if firing is not None and firing.status == PENDING:
                    row.next_attempt_at = max(row.next_attempt_at, firing.next_attempt_at)
                    continue
                if firing is None or firing.status != SENT:
                    row.status, row.last_error = SKIPPED, "its firing notification was not sent"
                    continue
            out.append(row)
        return out

    # -- repeats --------------------------------------------------------------------------
    def repeat(self, s: Session) -> None:
        """Queue a firing notification again for each alert still firing whose last one,
        per receiver, was delivered ``repeat_interval`` ago or muted by an ended silence.
        A few queries whatever the number of alerts firing (the last rows in one)."""
        link = outbox.base_url(self.config)
        last = outbox.last_firing_rows(s)
        muting: dict[str, list] = {}
        for row in s.scalars(select(AlertRow).where(AlertRow.status == "firing")):
            job = s.get(Job, row.job_id)
            rules = self.book.of(s, job) if job is not None else None
            rule = rules.rule(row.rule) if rules is not None else None
            if job is None or rule is None:
                continue
            if job.team not in muting:
                muting[job.team] = silences.active(s, job.team)
            labels = json.loads(row.labels_json or "{}")
            muted = silences.silenced(muting[job.team], row.rule,
                                      {**labels, "job": job.name}) is not None  # fmt: skip
            due = [
                r for r in rule.notify
                if _repeat_due(last.get((row.fingerprint, r)), rule.repeat_interval_ms, muted)
            ]  # fmt: skip
            if due:
                values = json.loads(row.last_value_json or "{}")
                alert = outbox.make_alert(
                    job, rule, row.fingerprint, labels, "firing", row.starts_at, None, values, link
                )
                outbox.enqueue(s, job, rule, alert, link, due)


def _repeat_due(last: OutboxRow | None, repeat_ms: int, muted: bool) -> bool:
    """Whether an alert firing still is due again at a receiver whose newest firing row
    is ``last``."""
    if last is None:
        return False  # a receiver added to the rule after the alert fired
    if last.status == SILENCED:
        return not muted
    if last.status == SENT and last.sent_at is not None:
        return now() - last.sent_at >= timedelta(milliseconds=repeat_ms)
    return False


def _notification(payloads: list[dict[str, Any]]) -> Any:
    """One notification of the alerts of ``payloads`` (one-alert notifications of one
    group and receiver)."""

    first = Notification.from_dict(payloads[0])
    alerts = [a for p in payloads for a in Notification.from_dict(p).alerts]
    status = "firing" if any(a.status == "firing" for a in alerts) else "resolved"
    return Notification(first.receiver, first.group_key, alerts, status, first.external_url)
