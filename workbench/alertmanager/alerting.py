"""Alerting in the supervising process: the alert store's pass on each supervisor tick and
the dispatcher's thread, started and stopped with supervision (one process at a time)."""

from __future__ import annotations

from workbench.alertmanager.dispatch import Dispatcher
from workbench.alertmanager.rulebook import RuleBook
from workbench.alertmanager.store import AlertStore
from workbench.jobs.config import ServiceConfig
from workbench.jobs.db import Database


class Alerting:
    def __init__(self, config: ServiceConfig, db: Database):
        self.book = RuleBook(config)
        self.store = AlertStore(config, db, self.book)
        self.dispatcher = Dispatcher(config, db, self.book)

    def start(self) -> None:
        """Start delivering (when this process begins to supervise)."""
        self.dispatcher.start()

    def tick(self) -> None:
        """Ingest the jobs' observations and evaluate their rules (every supervisor tick)."""
        self.store.tick()

    def stop(self) -> None:
        self.dispatcher.stop()
