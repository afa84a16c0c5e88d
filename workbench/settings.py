"""The workbench's settings from the environment: the one module that reads ``os.environ``.

Every environment variable the workbench reads is a typed field of :class:`Settings`, with
its default and help; :func:`settings` gives the current values. The job service's
``service.yaml`` (:class:`workbench.jobs.config.ServiceConfig`), the dashboard's YAML file
(:class:`workbench.dashboard.config.DashboardConfig`) and the Jupyter server's traits
(:class:`workbench.server.extension.WorkbenchService`) are documented beside it in one
reference, ``docs/configuration.md``, generated from the models
(``python -m workbench.cli.configuration > docs/configuration.md``; a test keeps it true).

Why pydantic-settings: it reads typed settings from the environment (and YAML), and the
project already describes ``service.yaml`` and specs with pydantic models, so the
environment, ``service.yaml`` and the dashboard's file share one way of declaring a
setting (``Field(default, description=...)``). traitlets stays only where jupyter_server
itself needs traits (``c.WorkbenchService.*``).

Values are read when asked: :func:`settings` re-reads the environment when one of its
variables changed (tests set them with ``monkeypatch.setenv``), and is a dictionary look-up
otherwise. An empty variable counts as unset. Code that starts a child process builds its
environment with :func:`child_env`; the few variables the workbench sets for itself or its
children go through :func:`set_default`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

Jit = Literal["full", "quick"]
DASHBOARD_PREFIX = "WORKBENCH_DASHBOARD_"
#: The dashboard's settings that a ``WORKBENCH_DASHBOARD_*`` variable overrides:
#: {variable suffix: the dashboard setting}.
DASHBOARD_OVERRIDES = {
    "STORE": "store",
    "MEASUREMENT": "measurement",
    "HOURS": "hours",
    "REFRESH": "refresh_seconds",
    "AREA": "area",
    "AREAS": "areas",
    "STYLE": "style",
}


def _variable(name: str | AliasChoices, default: Any = None, help: str = "", **more: Any) -> Any:
    return Field(default, validation_alias=name, description=help, **more)


def _dashboard(key: str, setting: str) -> Any:
    return _variable(
        DASHBOARD_PREFIX + key, help=f"Overrides the dashboard's `{setting}` (see below)."
    )


def _choice(value: Any, choices: tuple[str, ...], default: str, lower: bool = True) -> str:
    """A choice as the workbench always read it: trimmed (and lower-cased), anything
    unknown meaning the default."""
    text = str(value).strip()
    text = text.lower() if lower else text
    return text if text in choices else default


class Settings(BaseSettings):
    """Every environment variable the workbench reads (an empty one counts as unset)."""

    model_config = SettingsConfigDict(
        case_sensitive=True, env_ignore_empty=True, extra="ignore", frozen=True
    )

    # -- where things live ------------------------------------------------------------
    home: Path | None = _variable(
        "WORKBENCH_HOME",
        help="State folder: jars, descriptor sets, the dev broker's data, logs, the job "
        "service's state. Unset: `.workbench` in a source checkout, else the user's cache "
        "folder (`~/.cache/dagger-workbench`).",
    )
    schemas: Annotated[tuple[str, ...], NoDecode] = _variable(
        "WORKBENCH_SCHEMAS",
        (),
        help="Folders of `.proto` files added to the bundled schemas (an `os.pathsep` list).",
    )
    java_home: Path | None = _variable(
        "JAVA_HOME", help="The Java installation for Spark and Kafka (unset: `java` on PATH)."
    )

    # -- Spark ------------------------------------------------------------------------
    spark_master: str = _variable(
        "WORKBENCH_SPARK_MASTER", "local[2]", help="The Spark master of sessions and kernels."
    )
    spark_log: str | None = _variable(
        "WORKBENCH_SPARK_LOG",
        help="Where the Spark JVM's output goes: `stderr`, or a file. Unset: stderr in the "
        "CLI, `$WORKBENCH_HOME/logs/spark-PID.log` in a notebook kernel.",
    )
    spark_log_level: str | None = _variable(
        "WORKBENCH_SPARK_LOG_LEVEL",
        help="Spark's log4j level (unset: ERROR on stderr, WARN to a file; "
        "`workbench run` sets OFF, or WARN with --verbose).",
    )
    jit: Jit = _variable(
        "WORKBENCH_JIT",
        "full",
        help="The JIT of every JVM the workbench starts (drivers, executors, Kafka): `quick` "
        "compiles with C1 only (short runs; the test suite sets it), `full` both compilers.",
    )
    kernel_jit: Jit = _variable(
        "WORKBENCH_KERNEL_JIT",
        "quick",
        help="The JIT of a notebook kernel's driver JVM: `quick` (C1 only: previews over "
        "samples), `full` (both compilers: long streams in a kernel).",
    )
    spark_start: Literal["background", "on-use"] = _variable(
        "WORKBENCH_SPARK_START",
        "background",
        help="When a notebook kernel starts Spark: `background` as it loads, `on-use` at "
        "first use.",
    )
    jvm_archive: Literal["on", "off"] = _variable(
        "WORKBENCH_JVM_ARCHIVE",
        "on",
        help="`off`: the Spark driver starts without the class-data-sharing archive "
        "`workbench setup` made.",
    )

    # -- Kafka, the job service, notebooks ---------------------------------------------
    bootstrap_servers: str | None = _variable(
        "WORKBENCH_BOOTSTRAP_SERVERS",
        help="The Kafka brokers a notebook reads every stream from, instead of each "
        "stream's own `bootstrap_servers` (`wb.connect(...)` wins).",
    )
    server: str | None = _variable(
        "WORKBENCH_SERVER",
        help="The job service's URL for the CLI, `promote` and notebooks (unset: the local "
        "service of `$WORKBENCH_HOME/service`, started on first use).",
    )
    token: str | None = _variable(
        "WORKBENCH_TOKEN", help="The API token sent to `$WORKBENCH_SERVER`.", repr=False
    )
    service_state: Path | None = _variable(
        "WORKBENCH_SERVICE_STATE",
        help="The job service's state folder in a Jupyter server, unless "
        "`c.WorkbenchService.state_dir` is set (unset: `$WORKBENCH_HOME/service`).",
    )
    promote_dir: Path | None = _variable(
        "WORKBENCH_PROMOTE_DIR",
        help="Set by `promote` in the kernel it runs a notebook in: the folder where the "
        "notebook's spec and previews are recorded (promote mode).",
    )
    session_name: str | None = _variable(
        "JPY_SESSION_NAME",
        help="The notebook's path, set by jupyter_server for its kernels (`wb.promote()` "
        "without a notebook).",
    )

    # -- maps and dashboards ------------------------------------------------------------
    map_style: str = _variable(
        "WORKBENCH_MAP_STYLE",
        "none",
        help="The basemap of a map drawn without a style: none, light, dark, satellite.",
    )
    mapbox_key: str | None = _variable(
        AliasChoices("MapboxAccessToken", "MAPBOX_API_KEY"),
        help="A Mapbox token for the satellite basemap (either name).",
        repr=False,
    )
    maptiler_key: str | None = _variable(
        "MAPTILER_API_KEY",
        help="A MapTiler key for the satellite basemap, when there is no Mapbox token.",
        repr=False,
    )
    dashboard_config: Path | None = _variable(
        DASHBOARD_PREFIX + "CONFIG", help="The dashboard's YAML file (see below)."
    )
    dashboard_store: str | None = _dashboard("STORE", "store")
    dashboard_measurement: str | None = _dashboard("MEASUREMENT", "measurement")
    dashboard_hours: str | None = _dashboard("HOURS", "hours")
    dashboard_refresh: str | None = _dashboard("REFRESH", "refresh_seconds")
    dashboard_area: str | None = _dashboard("AREA", "area")
    dashboard_areas: str | None = _variable(
        DASHBOARD_PREFIX + "AREAS",
        help="Overrides the dashboard's `areas` (comma-separated); behind a login, Voila's "
        "hook sets it to a viewer's areas.",
    )
    dashboard_style: str | None = _dashboard("STYLE", "style")
    jupyter_path: str | None = _variable(
        "JUPYTER_PATH", help="Jupyter's data folders; the dashboard server adds its own."
    )
    query_string: str = _variable(
        "QUERY_STRING", "", help="The page's query string in a Voila kernel (the quality view)."
    )

    @field_validator("schemas", mode="before")
    @classmethod
    def _folders(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part for part in value.split(os.pathsep) if part)
        return value

    @field_validator("spark_log", mode="before")
    @classmethod
    def _trimmed(cls, value: Any) -> Any:
        return (value.strip() or None) if isinstance(value, str) else value

    @field_validator("jit", "kernel_jit", mode="before")
    @classmethod
    def _jit(cls, value: Any, info: Any) -> str:
        return _choice(value, ("full", "quick"), "full" if info.field_name == "jit" else "quick")

    @field_validator("spark_start", mode="before")
    @classmethod
    def _start(cls, value: Any) -> str:
        return _choice(value, ("background", "on-use"), "background", lower=False)

    @field_validator("jvm_archive", mode="before")
    @classmethod
    def _archive(cls, value: Any) -> str:
        return _choice(value, ("on", "off"), "on")

    def dashboard_overrides(self) -> dict[str, str]:
        """The dashboard settings a ``WORKBENCH_DASHBOARD_*`` variable sets: {setting: text}."""
        values = {
            setting: getattr(self, f"dashboard_{suffix.lower()}")
            for suffix, setting in DASHBOARD_OVERRIDES.items()
        }
        return {k: v for k, v in values.items() if v}


def variables(field: str) -> list[str]:
    """The environment variables of the setting ``field``, the first one first."""
    alias = Settings.model_fields[field].validation_alias
    return [str(c) for c in (alias.choices if isinstance(alias, AliasChoices) else [alias])]


def variable(field: str) -> str:
    """The environment variable of the setting ``field``."""
    return variables(field)[0]


#: Every variable :class:`Settings` reads.
NAMES = tuple(name for field in Settings.model_fields for name in variables(field))
_cache: dict[tuple[str | None, ...], Settings] = {}


def settings() -> Settings:
    """The settings as the environment holds them now (read again when it changed)."""
    key = tuple(os.environ.get(name) for name in NAMES)
    found = _cache.get(key)
    if found is None:
        _cache.clear()
        found = _cache[key] = Settings()
    return found


def env_var(name: str) -> str | None:
    """The variable ``name`` as set (None if unset), for names the user chooses: a secret
    reference's ``${env:NAME}``, variables a kernel spec copies."""
    return os.environ.get(name)


def child_env(
    overrides: Mapping[str, str] | None = None, *, drop_prefix: str | None = None
) -> dict[str, str]:
    """A child process's environment: this process's, without the variables starting with
    ``drop_prefix``, then ``overrides``."""
    env = {k: v for k, v in os.environ.items() if not (drop_prefix and k.startswith(drop_prefix))}
    return env | dict(overrides or {})


def set_default(name: str, value: str) -> None:
    """Set the variable ``name`` for this process and its children, unless it is set
    (``PYSPARK_PYTHON`` for Spark's workers, ``PYTHONUNBUFFERED`` in a job process)."""
    os.environ.setdefault(name, value)
