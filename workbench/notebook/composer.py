"""The Composer: the notebook form of "Create a new dagger", in ipywidgets.

Name, one or two streams (:class:`~workbench.notebook.stream_form.StreamForm`), the SQL
editor, advanced options (watermark interval and delay, emit mode, parallelism, the
sink with its keys, e.g. the InfluxDB measurement) and the actions: Check, Preview
(sample the last N messages per partition of each stream and run the query over them
as a batch), Live (:mod:`workbench.notebook.live`) and Save YAML.

:attr:`Composer.spec` is the :class:`~workbench.spec.DaggerSpec` the form describes.
Errors are shown inline, next to the field they concern: SQL errors with their line and
column under the editor, spec errors at the widget their key (``streams[1].topics``)
names, stream problems under the stream's box; never a traceback.
"""

from __future__ import annotations

import html
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from workbench.exceptions import SpecError, SqlError, WorkbenchError
from workbench.lab.sampling import sample
from workbench.notebook.sink_form import SinkForm
from workbench.notebook.stream_form import (
    Field,
    StreamForm,
    TopicLister,
    error_html,
)
from workbench.notebook.widgets import as_widget, labelled
from workbench.schemas import default_registry
from workbench.spec import DaggerSpec, parse

if TYPE_CHECKING:
    from workbench.lab.preview import Preview
    from workbench.lab.sampling import Sample, SampleProgress
    from workbench.notebook.live import LivePreview
    from workbench.schemas import SchemaRegistry
    from workbench.spec import StreamSpec
    from workbench.streaming.validate import ValidationReport

MAX_STREAMS = 2
PARALLELISM = "spark.sql.shuffle.partitions"
_PROBLEM = re.compile(r"spec key '(?P<key>[^']*)': (?P<message>.*)")
_STREAM_KEY = re.compile(r"^streams\[(?P<i>\d+)\]\.?(?P<rest>.*)$")
_SINK_KEY = re.compile(r"^sinks\[0\]\.?(?P<rest>.*)$")


#: field → (short label, what it means: the tooltip); labels fit widgets.LABEL_STYLE.
LABELS = {
    "trigger_interval": (
        "Trigger every",
        "Watermark interval (Dagger's FLINK_WATERMARK_INTERVAL_MS): how often a micro-batch "
        "runs and the watermark moves on, e.g. 10s",
    ),
    "watermark_delay": (
        "Watermark delay",
        "How far the watermark stays behind the latest event time (Dagger's "
        "FLINK_WATERMARK_DELAY_MS): a window closes once the watermark passes its end; "
        "records of closed windows are dropped as late, e.g. 10s",
    ),
    "emit": ("Emit", "final: a window's row once it closes; updates: every change of a row"),
    "parallelism": (
        "Parallelism",
        "spark.sql.shuffle.partitions for this dagger; 0 keeps Spark's default",
    ),
    "sample_size": ("Sample size", "Preview: the last N messages of every partition"),
    "metric": ("Chart metric", "The result column the chart sums per window"),
}


def spec_problems(err: SpecError) -> list[tuple[str, str]]:
    """Every (key, message) a :class:`SpecError` reports (it lists further ones below)."""
    found = [(m["key"], m["message"]) for m in _PROBLEM.finditer(str(err))]
    return found or [(err.key, str(err))]


class Composer:
    """The "Create a new dagger" form; display it in a notebook cell."""

    def __init__(
        self,
        spec: DaggerSpec | None = None,
        *,
        bootstrap: str = "127.0.0.1:9092",
        registry: SchemaRegistry | None = None,
        path: str | Path | None = None,
        sample_size: int = 1000,
        list_topics: TopicLister | None = None,
        spark: Any = None,
    ):

        self.registry = registry or default_registry()
        self._bootstrap, self._spark = bootstrap, spark
        self._lister = {"list_topics": list_topics} if list_topics else {}
        self._base: dict[str, Any] = {}
        self.report: ValidationReport | None = None
        self.last_preview: Preview | None = None
        self._samples: dict[tuple, Sample] = {}
        self.live: LivePreview | None = None
        self._build_widgets(path, sample_size)
        self.streams: list[StreamForm] = []
        self.add_stream()
        if spec is not None:
            self.load(spec)

    # --- layout -------------------------------------------------------------------------

    def _build_widgets(self, path: str | Path | None, sample_size: int) -> None:
        wide = W.Layout(width="100%")
        self.name = Field(labelled(W.Text(placeholder="e.g. surge-pricing"), "Dagger name"))
        self.sql = Field(W.Textarea(layout=W.Layout(width="100%", height="14em")), "SQL")
        self.trigger_interval = Field(labelled(W.Text(value="10s"), *LABELS["trigger_interval"]))
        self.watermark_delay = Field(labelled(W.Text(value="10s"), *LABELS["watermark_delay"]))
        self.emit = Field(labelled(W.ToggleButtons(options=["final", "updates"]), *LABELS["emit"]))
        self.parallelism = Field(
            labelled(W.BoundedIntText(value=0, min=0, max=1024), *LABELS["parallelism"])
        )
        self.sink = SinkForm()
        self.streams_box = W.VBox([])
        self.streams_error = W.HTML("")
        self.add_button = W.Button(description="Add another stream", icon="plus")
        self.remove_button = W.Button(description="Remove stream 2", icon="minus")
        self.add_button.on_click(lambda _: self.add_stream())
        self.remove_button.on_click(lambda _: self.remove_stream())
        self.advanced = W.Accordion(
            [
                W.VBox(
                    [
                        self.trigger_interval.box,
                        self.watermark_delay.box,
                        self.emit.box,
                        self.parallelism.box,
                        W.HTML("<i>0 keeps Spark's default number of shuffle partitions</i>"),
                        self.sink.box,
                    ]
                )
            ],
            titles=("Advanced options",),
            selected_index=None,
        )
        self.sample_size = labelled(
            W.BoundedIntText(value=sample_size, min=1, max=1_000_000), *LABELS["sample_size"]
        )
        self.fresh = W.Checkbox(value=False, description="Fresh sample", indent=False)
        self.progress = W.FloatProgress(
            value=0.0, min=0.0, max=1.0, layout=W.Layout(visibility="hidden")
        )
        self.path = labelled(W.Text(value=str(path or ""), placeholder="NAME.yaml"), "YAML file")
        self.check_button = W.Button(description="Check", icon="check")
        self.preview_button = W.Button(description="Preview", icon="play", button_style="primary")
        self.live_button = W.Button(description="Live", icon="bolt")
        self.live_from = labelled(
            W.ToggleButtons(options=[("latest", "latest"), ("preview's sample", "sample")]),
            "Live from",
        )
        self.stop_button = W.Button(description="Stop live", icon="stop")
        self.save_button = W.Button(description="Save YAML", icon="save")
        self.check_button.on_click(lambda _: self.check())
        self.preview_button.on_click(lambda _: self.run_preview())
        self.live_button.on_click(lambda _: self.start_live())
        self.stop_button.on_click(lambda _: self.stop_live())
        self.save_button.on_click(lambda _: self.save())
        self.status = W.HTML("")
        self.result = W.HTML("")
        self.metric = labelled(W.Dropdown(options=[]), *LABELS["metric"])
        self.metric.observe(lambda _: self._draw_chart(), names="value")
        self.chart = W.Box([])
        self.live_box = W.VBox([])
        self.widget = W.VBox(
            [
                W.HTML("<h3>Create a new dagger</h3>"),
                self.name.box,
                self.streams_box,
                W.HBox([self.add_button, self.remove_button]),
                self.streams_error,
                self.sql.box,
                self.advanced,
                W.HBox([self.check_button, self.sample_size, self.fresh, self.preview_button]),
                self.progress,
                W.HBox([self.live_from, self.live_button, self.stop_button]),
                W.HBox([self.path, self.save_button]),
                self.status,
                self.result,
                self.metric,
                self.chart,
                self.live_box,
            ],
            layout=wide,
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def add_stream(self) -> StreamForm | None:
        """Add a stream box (a dagger reads at most two streams)."""
        if len(self.streams) >= MAX_STREAMS:
            return None
        form = StreamForm(
            len(self.streams), self.registry, bootstrap=self._bootstrap, **self._lister
        )
        form.refresh_topics(quick=True)
        self.streams.append(form)
        self._layout_streams()
        return form

    def remove_stream(self) -> None:
        if len(self.streams) > 1:
            self.streams.pop()
            self._layout_streams()

    def _layout_streams(self) -> None:
        self.streams_box.children = [f.box for f in self.streams]
        self.add_button.disabled = len(self.streams) >= MAX_STREAMS
        self.remove_button.disabled = len(self.streams) <= 1

    # --- the spec -----------------------------------------------------------------------

    def load(self, spec: DaggerSpec) -> None:
        """Fill the form from ``spec`` (keys the form does not show are kept as they are)."""
        self._base = spec.model_dump(mode="json", exclude_defaults=True)
        while len(self.streams) < len(spec.streams):
            self.add_stream()
        while len(self.streams) > len(spec.streams):
            self.remove_stream()
        for form, stream in zip(self.streams, spec.streams, strict=True):
            form.load(stream)
        self.name.input.value = spec.name
        self.sql.input.value = spec.sql
        self.trigger_interval.input.value = str(spec.trigger_interval)
        self.watermark_delay.input.value = str(spec.watermark_delay)
        self.emit.input.value = spec.emit
        self.parallelism.input.value = int(spec.spark_conf.get(PARALLELISM, 0))
        if spec.sinks:
            self.sink.load(spec.sinks[0])
        if not self.path.value:
            self.path.value = f"{spec.name}.yaml"

    def data(self) -> dict[str, Any]:
        """The form as a spec mapping, over the loaded spec's keys the form does not show."""
        data = {k: v for k, v in self._base.items() if k not in ("streams", "sinks")}
        base_streams = self._base.get("streams", [])
        streams = []
        for i, form in enumerate(self.streams):
            base = dict(base_streams[i]) if i < len(base_streams) else {}
            for key in StreamForm.FIELDS:
                base.pop(key, None)
            streams.append(base | form.data())
        conf = dict(data.get("spark_conf", {}))
        conf.pop(PARALLELISM, None)
        if self.parallelism.input.value:
            conf[PARALLELISM] = str(self.parallelism.input.value)
        data |= {
            "name": self.name.input.value.strip(),
            "streams": streams,
            "sql": self.sql.input.value,
            "trigger_interval": self.trigger_interval.input.value.strip(),
            "watermark_delay": self.watermark_delay.input.value.strip(),
            "emit": self.emit.input.value,
            "sinks": self.sink.data() + self._base.get("sinks", [])[1:],
            "spark_conf": conf,
        }
        return data

    @property
    def spec(self) -> DaggerSpec:
        """The dagger spec the form describes (:class:`SpecError` when it is not valid)."""
        return parse(self.data())

    # --- actions ------------------------------------------------------------------------

    def check(self) -> ValidationReport | None:
        """Validate everything (keys, messages, event time, the SQL analysed by Spark);
        show each problem next to its field. The report, or None when something is wrong."""
        from workbench.streaming.validate import check

        self.clear_errors()
        self.report = None
        if not self._tables_differ():
            return None
        try:
            self.report = check(self.spec)
        except Exception as err:  # shown inline, never as a traceback
            self.show_error(err)
            return None
        self._say("ok: " + html.escape(self.report.render().splitlines()[0].removeprefix("ok: ")))
        return self.report

    def _tables_differ(self) -> bool:
        seen: dict[str, int] = {}
        for i, form in enumerate(self.streams):
            table = form.table.input.value.strip()
            if table in seen:
                form.table.show_error(
                    f"stream {seen[table] + 1} already reads into table '{table}': "
                    "give each stream its own table name"
                )
                return False
            seen[table] = i
        return True

    def save(self, path: str | Path | None = None) -> Path | None:
        """Check the spec, then write it as YAML (to ``path`` or the form's file name)."""
        if self.check() is None:
            return None
        assert self.report is not None
        target = Path(path or self.path.value.strip() or f"{self.report.spec.name}.yaml")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(self.report.spec.to_yaml())
        except OSError as err:
            self._say(error_html(f"Could not write {target}: {err}"))
            return None
        self.path.value = str(target)
        self._say(f"saved <code>{html.escape(str(target))}</code>")
        return target

    def run_preview(self, fresh: bool | None = None) -> Preview | None:
        """Sample each stream (the last N messages per partition; ``fresh`` samples again
        rather than reusing the last sample) and run the query over the samples as a
        batch; shows the rows, counts and a chart. The Preview, or None."""
        from workbench.lab.preview import preview

        self.clear_result()
        report = self.check()
        if report is None:
            return None
        started = time.monotonic()
        fresh = self.fresh.value if fresh is None else fresh
        try:
            spec = report.spec
            samples = {s.table: self._sample(s, spec.schemas, fresh) for s in spec.streams}
            self._say("running the query over the samples…")
            result = preview(spec, samples, spark=self._spark)
        except Exception as err:
            self.show_error(err)
            return None
        self.last_preview = result
        self._show_preview(result, time.monotonic() - started)
        return result

    def _sample(self, stream: StreamSpec, schemas: list[str], fresh: bool) -> Sample:
        """The last N messages per partition of ``stream``; the same stream and N reuse
        the sample taken before (its decoded frame is cached too) unless ``fresh``."""
        from workbench import notebook
        from workbench.notebook.progress import describe

        key = (stream.model_dump_json(), tuple(schemas), self.sample_size.value)
        if fresh or key not in self._samples:
            self.progress.layout.visibility, self.progress.value = "visible", 0.0
            self.progress.description = f"sampling {stream.table}"

            def progress(done: SampleProgress) -> None:
                self.progress.value = done.fraction
                self._say(f"sampling <b>{html.escape(stream.table)}</b>: {describe(done)}")

            self._samples[key] = sample(
                stream,
                bootstrap=stream.bootstrap_servers,
                last=self.sample_size.value,
                progress=progress,
                schemas=schemas,
            )
            self.progress.value = 1.0
        notebook.samples[stream.table] = self._samples[key]  # %%dagger previews use it too
        return self._samples[key]

    def _show_preview(self, result: Preview, elapsed: float) -> None:
        from workbench.lab.preview import chart_metrics, group_keys, measures

        self._say(f"preview in {elapsed:.1f}s (sampling included)")
        self.result.value = result._repr_html_()
        keys = group_keys(result.sql)
        self.metric.options = chart_metrics(result.rows, keys)
        self.metric.value = next(iter(measures(result.rows, keys)), None)
        self._draw_chart()

    def clear_result(self) -> None:
        """Forget the shown preview (its table, metric and chart): a new run starts."""
        self.last_preview = None
        self.result.value = ""
        self.metric.options = []
        self.chart.children = []

    def _draw_chart(self) -> None:
        if self.last_preview is None or not self.metric.value:
            self.chart.children = []
            return
        try:
            self.chart.children = [as_widget(self.last_preview.chart(self.metric.value))]
        except Exception as err:
            self.chart.children = [W.HTML(error_html(f"No chart of {self.metric.value}: {err}"))]

    def start_live(self, **options: Any) -> LivePreview | None:
        """Run the query as a short-lived streaming query from the latest offsets or from
        the start of the last preview's samples; ``options`` go to :class:`LivePreview`
        (``max_rows``, ``duration_s``, ``mode``...)."""
        from workbench.notebook.live import LivePreview

        report = self.check()
        if report is None:
            return None
        if "start" not in options and self.live_from.value == "sample":
            if self.last_preview is None:
                self._say(error_html("Run Preview first: the live preview starts at its sample."))
                return None
            options["start"] = self.last_preview.samples
        try:
            self.live = LivePreview(report.spec, spark=self._spark, **options).start()
        except Exception as err:
            self.show_error(err)
            return None
        self.live_box.children = [self.live.widget()]
        return self.live

    def stop_live(self) -> None:
        if self.live is not None:
            self.live.stop()

    # --- errors -------------------------------------------------------------------------

    def show_error(self, err: BaseException) -> None:
        """Put ``err`` next to the field it concerns (the status line when none)."""
        if isinstance(err, SqlError):
            self.sql.show_error(str(err))
        elif isinstance(err, SpecError):
            for key, message in spec_problems(err):
                self._route(key, message)
        elif isinstance(err, WorkbenchError):
            self._say(error_html(str(err)))
        else:
            self._say(error_html(f"{type(err).__name__}: {err}"))

    def _route(self, key: str, message: str) -> None:
        stream, sink = _STREAM_KEY.match(key), _SINK_KEY.match(key)
        top = {
            "name": self.name,
            "sql": self.sql,
            "trigger_interval": self.trigger_interval,
            "watermark_delay": self.watermark_delay,
            "emit": self.emit,
            "spark_conf": self.parallelism,
        }
        if stream and int(stream["i"]) < len(self.streams):
            self.streams[int(stream["i"])].show_error(stream["rest"], message)
        elif sink:
            self.sink.show_error(sink["rest"], message)
            self.advanced.selected_index = 0
        elif key in top:
            top[key].show_error(message)
            if key not in ("name", "sql"):
                self.advanced.selected_index = 0
        elif key == "streams":
            self.streams_error.value += error_html(message)
        else:
            self._say(error_html(f"{key}: {message}"), append=True)

    def clear_errors(self) -> None:
        for field in (self.name, self.sql, self.trigger_interval, self.watermark_delay):
            field.show_error("")
        self.emit.show_error("")
        self.parallelism.show_error("")
        self.sink.clear_errors()
        for form in self.streams:
            form.clear_errors()
        self.streams_error.value = ""
        self.status.value = ""

    def _say(self, text: str, append: bool = False) -> None:
        self.status.value = (self.status.value if append else "") + f"<div>{text}</div>"
