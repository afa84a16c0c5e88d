"""The warehouse: Delta Lake tables the Delta sink writes, their files per partition,
and compaction of closed hour partitions (``workbench warehouse``)."""
