"""The job service as one object: :class:`~workbench.service.job_service.JobService` (every
operation on jobs, authorization-checked and recorded) and its supervisor, the reconcile
loop that composes the job store (:mod:`workbench.jobs`), the alert manager
(:mod:`workbench.alertmanager`) and quality auto-jobs (:mod:`workbench.quality`); the audit
trail of denied requests (:mod:`.audit`)."""
