"""Extension points: the one shape of every "X by name" table the package asks.

A :class:`Plugins` holds the plugins of one extension point (sink types, notifier types,
UDFs, spec kinds, chaos faults, dashboard stores, alert rule kinds), one module-level
instance each (``SINKS``, ``NOTIFIERS``, ``UDFS``, ``KINDS``, ``FAULTS``, ``STORES``,
``RULE_KINDS``). Its built-ins are modules named by dotted path that register their
plugins with :meth:`Plugins.add` when imported; third-party packages do the same from an
entry-point group (``workbench.sinks``...). Both are imported once, on the first
question, so the table never imports the modules that import it. An unknown name is
answered with the known ones and the closest ("did you mean").

Callers ask the table (``SINKS.get(name)``) and the plugin (its methods) rather than
branching on a name. (Not to be confused with the *schema* registry,
:class:`workbench.schemas.SchemaRegistry`: the protobuf messages a job decodes.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from importlib import import_module
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from workbench.exceptions import UnknownNameError

T = TypeVar("T")

#: Builds the error for an unknown name from the name and the known names.
Unknown = Callable[[str, list[str]], Exception]


class Plugins(Generic[T]):
    """The plugins of one extension point, by name.

    ``what`` names a plugin in errors ("sink type"); ``builtins`` are the modules that
    register the built-in plugins; ``group`` the entry-point group of third-party ones;
    ``unknown`` builds the error for an unknown name (default :class:`UnknownNameError`);
    ``fold`` makes names case-insensitive (they are listed as first written)."""

    def __init__(
        self,
        what: str,
        builtins: Iterable[str] = (),
        group: str | None = None,
        unknown: Unknown | None = None,
        fold: bool = False,
    ):
        self.what, self.builtins, self.group = what, tuple(builtins), group
        self._unknown = unknown or (lambda name, known: UnknownNameError(what, name, known))
        self._fold = fold
        self._items: dict[str, tuple[str, T]] = {}
        self._loaded = False
        self._loading = threading.RLock()  # jobs and service threads ask at once

    def add(self, name: str, plugin: T) -> T:
        """Register ``plugin`` as ``name`` (a later one of the same name replaces it)."""
        self._items[self._key(name)] = (name, plugin)
        return plugin

    def remove(self, name: str) -> None:
        """Forget ``name`` (a plugin a test registered)."""
        self._items.pop(self._key(name), None)

    def get(self, name: str) -> T:
        """The plugin called ``name``; the ``unknown`` error naming the known ones."""
        found = self.find(name)
        if found is None:
            raise self._unknown(name, self.names())
        return found

    def find(self, name: str) -> T | None:
        """The plugin called ``name``, or None."""
        item = self._table().get(self._key(name))
        return None if item is None else item[1]

    def names(self) -> list[str]:
        """Every plugin's name, sorted (case-insensitively)."""
        return sorted((name for name, _ in self._table().values()), key=str.lower)

    def __contains__(self, name: str) -> bool:
        return self._key(name) in self._table()

    def __iter__(self) -> Iterator[T]:
        """The plugins, in the order of :meth:`names`."""
        items = sorted(self._table().values(), key=lambda item: item[0].lower())
        return iter([plugin for _, plugin in items])

    def _key(self, name: str) -> str:
        return name.lower() if self._fold else name

    def _table(self) -> dict[str, tuple[str, T]]:
        if not self._loaded:
            with self._loading:  # loaded once, and seen only once complete
                if not self._loaded:
                    for module in self.builtins:
                        import_module(module)
                    for ep in entry_points(group=self.group) if self.group else ():
                        ep.load()
                    self._loaded = True
        return self._items
