"""The city dashboard: a Voila page of S2 maps and charts over a dagger's sink, for city heads
(``workbench dashboard``), served behind the job service's login."""
