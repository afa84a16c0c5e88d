"""Sinks, registered by name in :data:`workbench.sinks.registry.SINKS`."""
