"""The dashboard's settings: a small YAML file, environment variables, or both.

    store: influx1:http://127.0.0.1:8086/dagger   # KIND:TARGET (see dashboard.stores)
    store_options: {username: reader, password: ...}
    dagger: daggers/surge-pricing.yaml            # heading and window from the dagger's spec
    measurement: surge
    cell_column: tag_s2id
    service_column: tag_vehicle_type
    metrics: [bookings, unique_customers]       # default: every numeric field
    hours: 6                                     # the time range shown, back from now
    refresh_seconds: 30
    area: jakarta
    areas: [bandung]                             # cities it may show (default: all)
    style: none                                  # basemap: none, light, dark, satellite

``WORKBENCH_DASHBOARD_CONFIG`` names the YAML file; ``WORKBENCH_DASHBOARD_STORE``,
``_MEASUREMENT``, ``_HOURS``, ``_REFRESH``, ``_AREA``, ``_AREAS`` (comma-separated) and
``_STYLE`` override single settings; behind a login, Voila's prelaunch hook sets a
viewer's ``_AREAS`` in the dashboard's kernel (:mod:`workbench.dashboard.voila_hooks`).
``workbench dashboard`` passes the whole resolved configuration to the Voila kernel as a
private file (:meth:`DashboardConfig.write`) named by ``WORKBENCH_DASHBOARD_CONFIG``, so
credentials in ``store_options`` travel in no URL,
command line or log. Without a store, the dashboard reads the Parquet folder
``workbench demo`` writes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from workbench.atlas.areas import ServiceArea, service_area, service_areas
from workbench.dashboard.stores import Layout, Store, open_store
from workbench.exceptions import SpecError, did_you_mean
from workbench.paths import home
from workbench.settings import DASHBOARD_PREFIX, child_env, settings

ENV_PREFIX = DASHBOARD_PREFIX
_USERINFO = re.compile(r"(://)[^/@]+@")
#: Event time may run ahead of the clock (the demo's speed-up): look this far past now.
AHEAD_MINUTES = 15


def demo_store() -> str:
    return f"parquet:{home() / 'demo' / 'parquet'}"


def _help(text: str, shown: str | None = None) -> dict[str, str]:
    """A setting's help (and its default as docs/configuration.md shows it)."""
    return {"help": text, **({"default": shown} if shown else {})}


@dataclass(frozen=True)
class DashboardConfig:
    store: str = field(
        default_factory=demo_store,
        metadata=_help(
            "Where the dashboard reads: KIND:TARGET (see `workbench.dashboard.stores`).",
            "parquet:$WORKBENCH_HOME/demo/parquet",
        ),
    )
    store_options: dict[str, Any] = field(
        default_factory=dict,
        repr=False,
        metadata=_help("The store's options, e.g. {username: reader, password: ...}."),
    )  # credentials
    dagger: str = field(
        default="",
        metadata=_help(
            "The dagger's spec YAML: the page's heading (its name and description) and the "
            "window of its results (empty: read off the results)."
        ),
    )
    measurement: str = field(default="surge", metadata=_help("The measurement (table) read."))
    cell_column: str = field(default="tag_s2id", metadata=_help("The S2 cell id column."))
    service_column: str = field(
        default="tag_vehicle_type", metadata=_help("The service type column.")
    )
    time_column: str = field(default="window_timestamp", metadata=_help("The window's time."))
    metrics: list[str] = field(
        default_factory=list, metadata=_help("The metrics shown (empty: every numeric field).")
    )
    hours: float = field(default=6.0, metadata=_help("The time range shown, back from now."))
    refresh_seconds: float = field(default=30.0, metadata=_help("Seconds between refreshes."))
    area: str = field(default="jakarta", metadata=_help("The service area shown first."))
    areas: list[str] = field(
        default_factory=list,
        metadata=_help("The service areas it may show (empty: every service area)."),
    )
    style: str = field(default="none", metadata=_help("The basemap: none, light, dark, satellite."))

    @classmethod
    def load(cls, path: str | Path | None = None, **overrides: Any) -> DashboardConfig:
        """From the YAML ``path`` (or ``$WORKBENCH_DASHBOARD_CONFIG``), then the environment,
        then ``overrides`` (None values ignored)."""
        config = cls()
        source = path or settings().dashboard_config
        if source:
            config = config._with(_read_yaml(Path(source)), str(source))
        config = config._with(settings().dashboard_overrides(), "environment")
        return config._with({k: v for k, v in overrides.items() if v is not None}, "arguments")

    def allowed_areas(self) -> list[ServiceArea]:
        """The service areas this dashboard may show, in the areas file's order."""
        every = list(service_areas().values())
        if not self.areas:
            return every
        wanted = {service_area(a).key for a in self.areas}  # unknown: UnknownNameError
        return [a for a in every if a.key in wanted]

    def first_area(self) -> ServiceArea:
        """The area shown first: ``area`` if allowed, else the first allowed one."""
        allowed = self.allowed_areas()
        chosen = service_area(self.area)
        return chosen if chosen in allowed else allowed[0]

    def layout(self) -> Layout:
        return Layout(self.measurement, self.cell_column, self.service_column, self.time_column)

    def open_store(self) -> Store:
        return open_store(self.store, self.layout(), **self.store_options)

    def write(self, path: Path) -> Path:
        """Every setting as a YAML file only its owner can read (it may hold credentials)."""
        import yaml

        path.touch(mode=0o600)
        path.chmod(0o600)
        path.write_text(yaml.safe_dump(asdict(self), sort_keys=False), encoding="utf-8")
        return path

    def environment(self, path: Path) -> dict[str, str]:
        """The environment of a Voila server's kernels: the whole configuration as the file
        at ``path`` (written here), and no single-setting override left to differ from it."""
        written = str(self.write(path))
        return child_env({ENV_PREFIX + "CONFIG": written}, drop_prefix=ENV_PREFIX)

    def public_store(self) -> str:
        """The store's name with any ``user:password@`` in its URL hidden, for messages."""
        return _USERINFO.sub(r"\1***@", self.store)

    def _with(self, values: dict[str, Any], source: str) -> DashboardConfig:
        known = {f.name: f for f in fields(self)}
        for key in values:
            if key not in known:
                raise SpecError(
                    key, f"unknown dashboard setting.{did_you_mean(key, known)}", source
                )
        converted = {k: _convert(known[k].type, v, k, source) for k, v in values.items()}
        return replace(self, **converted)


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as err:
        raise SpecError("config", f"cannot read the dashboard config: {err}", str(path)) from err
    if not isinstance(data, dict):
        raise SpecError("config", "the dashboard config is a mapping of settings", str(path))
    return data


def _convert(kind: Any, value: Any, key: str, source: str) -> Any:
    text = str(kind)
    try:
        if text == "float":
            number = float(value)
            if number <= 0:
                raise ValueError("must be positive")
            return number
        if text.startswith("list") and isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
    except ValueError as err:
        raise SpecError(key, f"{value!r} is not a positive number ({err})", source) from err
    return value
