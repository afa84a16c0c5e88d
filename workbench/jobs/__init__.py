"""The job store and its processes: the service's database (jobs, versions, runs, events and
the alert and quality tables), versions and checkpoints, the run folder and the run process
(:mod:`.runner`), shared Spark applications, leases, clusters, Kafka failover and lag. The
service that drives them is :mod:`workbench.service`."""
