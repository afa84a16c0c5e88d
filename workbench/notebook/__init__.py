"""The workbench in a notebook: streams, schemas, samples, previews and the ``%%dagger`` magic.

    import workbench.notebook as wb
    wb.use("my-dagger.yaml")              # its streams become known (the bundled ones are)
    wb.streams()                          # table, message, topics, servers, current sample
    wb.schema("BookingLogMessage")        # a message's field tree
    wb.sample("booking", last=1000)       # becomes the current sample of table 'booking'
    wb.preview("SELECT ... FROM booking") # over the current samples: a results table

or, after ``%load_ext workbench.notebook`` (the workbench kernel loads it):
``%dagger_streams``, ``%dagger_schema MESSAGE`` and a ``%%dagger`` cell holding dagger SQL
(see :mod:`workbench.notebook.magics`).

State is per kernel: the known streams (by table), the current samples (:data:`samples`,
table → :class:`~workbench.lab.sampling.Sample`) and the last preview. ``connect(servers)``
(or ``$WORKBENCH_BOOTSTRAP_SERVERS``) points every stream at other Kafka servers, as
``workbench run --bootstrap-servers`` does. Unknown tables and messages raise
:class:`~workbench.exceptions.UnknownNameError` naming the known ones.

Under ``workbench promote`` (``$WORKBENCH_PROMOTE_DIR`` set) ``use``, ``connect`` and
``preview`` also record the spec, samples and preview rows (:mod:`.promoting`);
``promote(notebook, team)`` promotes a saved notebook from Python.
"""

from __future__ import annotations

from workbench.notebook.api import (  # noqa: F401 (the notebook API)
    APP_NAME,
    DEFAULT_LAST,
    START_ENV,
    Schema,
    SparkLog,
    add_stream,
    background_start,
    bootstrap_for,
    connect,
    current_samples,
    current_spec,
    last_preview,
    load_sample,
    preview,
    promote,
    reset,
    sample,
    samples,
    schema,
    spark,
    spark_log,
    start_spark,
    stream,
    streams,
    use,
)
from workbench.notebook.magics import load_ipython_extension, unload_ipython_extension  # noqa: F401
