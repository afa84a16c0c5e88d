"""Local infrastructure the workbench sets up by itself: Maven jars, the UDF jar, services."""
