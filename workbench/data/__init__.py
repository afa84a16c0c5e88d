"""Files the package ships: the demo daggers, service areas, the dev broker's and Spark's log
configuration (read with :mod:`importlib.resources` or :data:`workbench.paths.PACKAGE_DIR`)."""
