"""The production run of a dagger: a checkpointed Spark streaming job, its progress,
checkpoints, dead letters, deduplication and late records, and ``workbench validate``."""
