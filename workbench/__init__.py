"""Dagger Workbench: Flink-style dagger SQL over Kafka protobuf streams, on Spark."""

__version__ = "0.1.0"
