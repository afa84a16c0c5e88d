"""Alerts: rules in a spec (:mod:`.rules`), their observation over a job's result rows
(:mod:`.observe`), the pure firing/resolved state machine (:mod:`.state`) and test-fire
over preview or replay rows (:mod:`.testfire`)."""
