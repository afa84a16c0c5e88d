"""The job service's alert manager: alert state per job, health rules, silences, and the
outbox that groups and delivers notifications (rules themselves are :mod:`workbench.alerts`)."""
