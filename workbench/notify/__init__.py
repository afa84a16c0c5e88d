"""Notifiers: where an alert's notifications go (Slack, PagerDuty, a webhook, email).

A notifier type is a config model registered by name in
:data:`workbench.notify.registry.NOTIFIERS`; :func:`workbench.notify.registry.deliver`
sends one :class:`~workbench.notify.notification.Notification` (a group of alerts of one
rule) through a notifier's config, once, and raises
:class:`~workbench.exceptions.NotifyError` if the receiver did not take it. Retrying is the
caller's (the job service's outbox).
"""
