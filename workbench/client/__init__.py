"""Clients of the job service: :class:`~workbench.client.rest.ServiceClient` over HTTP, for the
CLI, ``promote``, notebooks and chaos, and the embedded default that starts a local
service when no server URL is given (:mod:`.embedded`)."""
