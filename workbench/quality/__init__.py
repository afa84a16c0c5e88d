"""Quality jobs (``kind: quality`` specs): per topic and event-time window, how many records
arrived, how many were expected, duplicated, late or undecodable, and a score.

Modules follow the data: :mod:`~workbench.quality.spec` (the spec), :mod:`~.facts` (one
row of facts per Kafka record), :mod:`~.gaps` (offsets the log no longer holds),
:mod:`~.metrics` (facts to one metric row per topic and window), :mod:`~.score` (the
score formula), :mod:`~.state` (what a run remembers between micro-batches) and
:mod:`~.job` (the streaming query).
"""
