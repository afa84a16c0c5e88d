"""Dagger Workbench job service: the production side of a dagger (jobs, versions, runs)."""
