"""The Parquet sink's folder (``dt=YYYY-MM-DD/hour=HH`` partitions), read with pyarrow.

Only committed files are read: the sink writes through Spark's file sink, whose
``_spark_metadata`` log lists the files of every finished micro-batch (a compacted
``N.compact`` file holds all entries up to batch N). A folder without that log (written
by a batch job) is read whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from workbench.dashboard.errors import StoreEmptyError, StoreUnreachableError
from workbench.dashboard.stores import STORES
from workbench.dashboard.stores.base import Layout, Query
from workbench.sinks.generations import logged_files

if TYPE_CHECKING:
    import pandas as pd

PARTITIONS = ("dt", "hour")


@dataclass
class ParquetStore:
    kind: ClassVar[str] = "parquet"
    path: str
    layout: Layout = field(default_factory=Layout)

    @classmethod
    def from_target(cls, target: str, layout: Layout, **options: Any) -> ParquetStore:
        return cls(path=str(Path(target).expanduser()), layout=layout, **options)

    def describe(self) -> str:
        return f"Parquet folder {self.path}"

    def metrics(self) -> list[str]:
        import pyarrow as pa

        lay = self.layout
        skip = {lay.cell_column, lay.service_column, lay.time_column, *PARTITIONS}
        schema = self._dataset().schema
        return [
            f.name
            for f in schema
            if f.name not in skip and (pa.types.is_integer(f.type) or pa.types.is_floating(f.type))
        ]

    def services(self) -> list[str]:
        table = self._dataset().to_table(columns=[self.layout.service_column])
        return sorted({str(v) for v in table.column(0).to_pylist() if v is not None})

    def read(self, query: Query) -> pd.DataFrame:
        import pyarrow.dataset as ds

        lay = self.layout
        start, end = _naive_utc(query.start), _naive_utc(query.end)
        where = (ds.field(lay.time_column) >= start) & (ds.field(lay.time_column) < end)
        dataset = self._dataset()
        if "dt" in dataset.schema.names:
            day_from, day_to = start.strftime("%Y-%m-%d"), end.strftime("%Y-%m-%d")
            where &= (ds.field("dt") >= day_from) & (ds.field("dt") <= day_to)
        if query.service:
            where &= ds.field(lay.service_column) == query.service
        columns = [lay.time_column, lay.cell_column, lay.service_column, query.metric]
        frame = dataset.to_table(columns=columns, filter=where).to_pandas()
        frame.columns = ["time", "cell", "service", "value"]
        frame = frame.dropna(subset=["value"])
        if frame.empty:
            raise StoreEmptyError(
                self.describe(),
                f"No '{query.metric}' results in {self.path} between "
                f"{start:%Y-%m-%d %H:%M} and {end:%Y-%m-%d %H:%M} UTC.",
            )
        frame["time"] = frame["time"].dt.tz_localize("UTC")
        return frame.astype({"cell": str, "service": str, "value": float})

    def _dataset(self) -> Any:
        import pyarrow as pa
        import pyarrow.dataset as ds

        root = Path(self.path)
        if not root.is_dir():
            raise StoreUnreachableError(
                self.describe(),
                f"The results folder {root} does not exist: has the dagger's Parquet sink "
                "written yet, and is the dashboard's store path right?",
            )
        partitioning = ds.partitioning(
            pa.schema([(name, pa.string()) for name in PARTITIONS]), flavor="hive"
        )
        files = logged_files(root)
        source: Any = [str(f) for f in files if f.exists()] if files is not None else str(root)
        if not source:
            raise StoreEmptyError(self.describe(), f"{root} holds no committed results yet.")
        return ds.dataset(
            source, format="parquet", partitioning=partitioning, partition_base_dir=str(root)
        )


def _naive_utc(moment: datetime) -> datetime:
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(tzinfo=None)


STORES.add(ParquetStore.kind, ParquetStore)
