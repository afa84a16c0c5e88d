"""Chaos and load: a TCP fault proxy, a load driver, scenarios of faults with probes,
a ledger of what was produced against what landed, and reports (``workbench chaos``)."""
