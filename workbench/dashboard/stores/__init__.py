"""Results stores the dashboard reads, registered by kind: a new store is one module with
a class (``kind``, ``from_target``, ``metrics``, ``services``, ``read``) that ends with
``STORES.add(kind, class)``, named in :data:`BUILTIN` (:class:`workbench.plugins.Plugins`).

A store is named by ``KIND:TARGET``: ``influx1:http://127.0.0.1:8086/dagger``,
``victoriametrics:http://127.0.0.1:8428``, ``parquet:.workbench/demo/parquet``.
"""

from __future__ import annotations

from typing import Any

from workbench.dashboard.errors import StoreError
from workbench.dashboard.stores.base import Layout, Query, Store
from workbench.exceptions import UnknownNameError
from workbench.plugins import Plugins

#: the modules registering the built-in stores
BUILTIN = tuple(f"workbench.dashboard.stores.{name}" for name in ("influx1", "victoria", "parquet"))
#: store classes by kind (each with ``from_target(target, layout, **options)``)
STORES = Plugins[Any]("store kind", BUILTIN)

__all__ = ["STORES", "Layout", "Query", "Store", "open_store"]


def open_store(name: str, layout: Layout | None = None, **options: Any) -> Store:
    """The store ``KIND:TARGET`` names (see the module's doc); ``options`` go to its class."""
    kind, sep, target = name.partition(":")
    if not sep or not target:
        raise StoreError(
            name,
            f"A store is KIND:TARGET, e.g. influx1:http://127.0.0.1:8086/dagger; got '{name}'.",
        )
    try:
        store_class = STORES.get(kind)
    except UnknownNameError as err:
        raise StoreError(name, str(err)) from None
    store: Store = store_class.from_target(target, layout or Layout(), **options)
    return store
