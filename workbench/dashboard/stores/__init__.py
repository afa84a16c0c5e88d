"""Results stores the dashboard reads, registered by kind: a new store is one module with
a class (``kind``, ``from_target``, ``metrics``, ``services``, ``read``) and one line here.

A store is named by ``KIND:TARGET``: ``influx1:http://127.0.0.1:8086/dagger``,
``victoriametrics:http://127.0.0.1:8428``, ``parquet:.workbench/demo/parquet``.
"""

from __future__ import annotations

from typing import Any

from workbench.dashboard.errors import StoreError
from workbench.dashboard.stores.base import Layout, Query, Store
from workbench.dashboard.stores.influx1 import InfluxV1Store
from workbench.dashboard.stores.parquet import ParquetStore
from workbench.dashboard.stores.victoria import VictoriaMetricsStore
from workbench.exceptions import did_you_mean

STORES: dict[str, Any] = {
    InfluxV1Store.kind: InfluxV1Store,
    VictoriaMetricsStore.kind: VictoriaMetricsStore,
    ParquetStore.kind: ParquetStore,
}

__all__ = ["STORES", "Layout", "Query", "Store", "open_store"]


def open_store(name: str, layout: Layout | None = None, **options: Any) -> Store:
    """The store ``KIND:TARGET`` names (see the module's doc); ``options`` go to its class."""
    kind, sep, target = name.partition(":")
    if not sep or not target:
        raise StoreError(
            name,
            f"A store is KIND:TARGET, e.g. influx1:http://127.0.0.1:8086/dagger; got '{name}'.",
        )
    if kind not in STORES:
        raise StoreError(name, f"Unknown store kind '{kind}'.{did_you_mean(kind, STORES)}")
    store: Store = STORES[kind].from_target(target, layout or Layout(), **options)
    return store
