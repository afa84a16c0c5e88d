"""InfluxDB 1.x through InfluxQL over HTTP (``/query``), as the v1 sink wrote it: one point
per cell, service type and window, ``tag_*`` columns as tags keeping their prefix."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.dashboard.errors import StoreEmptyError, StoreError
from workbench.dashboard.stores import STORES, http
from workbench.dashboard.stores.base import Layout, Query, points_frame, rfc3339

if TYPE_CHECKING:
    import pandas as pd

NUMERIC = ("integer", "float")


def ident(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class InfluxV1Store:
    kind: ClassVar[str] = "influx1"
    url: str
    database: str
    layout: Layout = field(default_factory=Layout)
    username: str | None = None
    password: str | None = None

    @classmethod
    def from_target(cls, target: str, layout: Layout, **options: Any) -> InfluxV1Store:
        """``http://host:8086/DATABASE`` (or the database in ``options``)."""
        base, _, database = target.rstrip("/").rpartition("/")
        if "database" not in options and base.endswith(":/"):
            base, database = target, ""  # no path: the URL is the server
        if "database" not in options and not database:
            raise StoreError(target, f"Name the database: influx1:{target.rstrip('/')}/DATABASE.")
        url = target if "database" in options else base
        return cls(url=url, layout=layout, **({"database": database} | options))

    def describe(self) -> str:
        return f"InfluxDB 1.x {self.url} database '{self.database}'"

    def metrics(self) -> list[str]:
        series = self._query(f"SHOW FIELD KEYS FROM {ident(self.layout.measurement)}")
        return [name for s in series for name, kind in s["values"] if kind in NUMERIC]

    def services(self) -> list[str]:
        key = ident(self.layout.service_column)
        series = self._query(
            f"SHOW TAG VALUES FROM {ident(self.layout.measurement)} WITH KEY = {key}"
        )
        return sorted({value for s in series for _, value in s["values"]})

    def read(self, query: Query) -> pd.DataFrame:
        lay = self.layout
        where = [
            f"time >= {literal(rfc3339(query.start))}",
            f"time < {literal(rfc3339(query.end))}",
        ]
        if query.service:
            where.append(f"{ident(lay.service_column)} = {literal(query.service)}")
        series = self._query(
            f"SELECT {ident(query.metric)} FROM {ident(lay.measurement)} "
            f"WHERE {' AND '.join(where)} "
            f"GROUP BY {ident(lay.cell_column)}, {ident(lay.service_column)}"
        )
        rows = [
            (stamp, s["tags"].get(lay.cell_column, ""), s["tags"].get(lay.service_column, ""), v)
            for s in series
            for stamp, v in s["values"]
            if v is not None
        ]
        nothing = (
            f"No '{query.metric}' results in measurement '{lay.measurement}' between "
            f"{rfc3339(query.start)[:16]} and {rfc3339(query.end)[:16]} UTC."
        )
        return points_frame(rows, self.describe(), nothing)

    def _query(self, influxql: str) -> list[dict[str, Any]]:
        params = {"q": influxql, "db": self.database, "epoch": "ms"}
        if self.username:
            params |= {"u": self.username, "p": self.password or ""}
        answer = http.call(self.describe(), "GET", self.url.rstrip("/") + "/query", params=params)
        results = answer.json().get("results", [{}])
        error = results[0].get("error") if results else None
        if error and "database not found" in error:
            raise StoreEmptyError(
                self.describe(),
                f"InfluxDB at {self.url} has no database '{self.database}': no results have "
                "been written there yet (or the dashboard names the wrong database).",
            )
        if error:
            raise StoreError(self.describe(), f"InfluxDB at {self.url} said: {error}")
        return list(results[0].get("series", [])) if results else []


STORES.add(InfluxV1Store.kind, InfluxV1Store)
