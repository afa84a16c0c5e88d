"""Kafka as production code needs it: admin calls, which cluster answers, MirrorMaker 2's
translated offsets. Nothing here starts a broker (that is :mod:`workbench.dev`)."""
