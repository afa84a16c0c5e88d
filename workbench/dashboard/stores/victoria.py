"""VictoriaMetrics, as the v2 (line protocol) sink wrote it: a series
``<measurement>_<field>`` per cell and service type, the tags as labels. Read with its
JSON-lines export (``/api/v1/export``), which returns the raw samples of a time range.
(VictoriaMetrics speaks no Flux, so the v2 sink's data is read here through its own API.)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.dashboard.stores import STORES, http
from workbench.dashboard.stores.base import Layout, Query, points_frame, rfc3339
from workbench.moments import epoch_ms

if TYPE_CHECKING:
    import pandas as pd

#: How far back the metric and service lists look.
LOOKBACK_DAYS = 31


def label_value(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class VictoriaMetricsStore:
    kind: ClassVar[str] = "victoriametrics"
    url: str
    layout: Layout = field(default_factory=Layout)

    @classmethod
    def from_target(cls, target: str, layout: Layout, **options: Any) -> VictoriaMetricsStore:
        return cls(url=target, layout=layout, **options)

    def describe(self) -> str:
        return f"VictoriaMetrics {self.url}"

    @property
    def _prefix(self) -> str:
        return f"{self.layout.measurement}_"

    def metrics(self) -> list[str]:
        names = self._label_values("__name__")
        return sorted(n[len(self._prefix) :] for n in names if n.startswith(self._prefix))

    def services(self) -> list[str]:
        return sorted(self._label_values(self.layout.service_column))

    def read(self, query: Query) -> pd.DataFrame:
        lay = self.layout
        selector = [f"__name__={label_value(self._prefix + query.metric)}"]
        if query.service:
            selector.append(f"{lay.service_column}={label_value(query.service)}")
        form = {
            "match[]": "{" + ",".join(selector) + "}",
            "start": str(epoch_ms(query.start) / 1000),
            "end": str(epoch_ms(query.end - timedelta(milliseconds=1)) / 1000),
        }
        answer = http.call(
            self.describe(), "POST", self.url.rstrip("/") + "/api/v1/export", data=form
        )
        rows = []
        for line in answer.text.splitlines():
            item = json.loads(line)
            labels = item["metric"]
            cell, service = labels.get(lay.cell_column, ""), labels.get(lay.service_column, "")
            rows += [
                (t, cell, service, v)
                for t, v in zip(item["timestamps"], item["values"], strict=True)
            ]
        nothing = (
            f"No '{query.metric}' results (series {self._prefix}{query.metric}) between "
            f"{rfc3339(query.start)[:16]} and {rfc3339(query.end)[:16]} UTC."
        )
        return points_frame(rows, self.describe(), nothing)

    def _label_values(self, label: str) -> list[str]:
        since = datetime.now(UTC) - timedelta(days=LOOKBACK_DAYS)  # default: the last day only
        match = {
            "match[]": f'{{__name__=~"{re.escape(self._prefix)}.*"}}',
            "start": str(epoch_ms(since) // 1000),
        }
        url = f"{self.url.rstrip('/')}/api/v1/label/{label}/values"
        answer = http.call(self.describe(), "GET", url, params=match)
        return list(answer.json().get("data", []))


STORES.add(VictoriaMetricsStore.kind, VictoriaMetricsStore)
