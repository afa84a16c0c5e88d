"""``workbench setup``: fetch and build everything a first run would otherwise wait for."""

from __future__ import annotations

import time
from collections.abc import Callable


def _step(label: str, action: Callable[[], object]) -> None:
    started = time.monotonic()
    result = action()
    count = f" ({len(result)} files)" if isinstance(result, list) else ""
    print(f"  {label}: ready{count} in {time.monotonic() - started:.1f}s")


def prepare() -> None:
    from workbench.atlas.assets import fetch_assets
    from workbench.atlas.geography import prepare as map_geography
    from workbench.atlas.shared import voila_static_root
    from workbench.dev.kafka import broker_jars
    from workbench.runtime import jvm_archive
    from workbench.runtime.spark import JAR_PROVIDERS, jar_provider
    from workbench.schemas import default_registry

    print("workbench setup")
    for spec in JAR_PROVIDERS:
        _step(f"jars from {spec}", jar_provider(spec))
    _step("kafka broker jars", broker_jars)
    _step("demo protobuf schemas", lambda: default_registry().descriptor_set_path())
    _step("map assets (deck.gl bundle, basemap css from npm)", fetch_assets)
    _step("map geography (coastlines and city names from npm, clipped)", map_geography)
    _step("dashboard static files (deck.gl for Voila)", voila_static_root)
    _step("Spark JVM class archive (faster Spark starts)", jvm_archive.build)
