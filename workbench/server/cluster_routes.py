"""The Spark cluster routes of the job service's API:

- ``GET clusters`` → ``{"clusters": [CLUSTER...]}``: the clusters the caller's teams may
  use (admins: all), as :mod:`workbench.jobs.clusters` shows them;
- ``GET clusters/{name}`` → ``CLUSTER`` (404 for a cluster the caller may not use);
- ``POST jobs/{ref}/move`` ``{"cluster": NAME}`` → the job: it stops and starts again on
  NAME from its checkpoint (:mod:`workbench.jobs.moves`); 400 when its team may not use
  NAME or it runs there already.
"""

from __future__ import annotations

from workbench.server.api import ApiError, ApiHandler

_REF = r"([^/]+)"


class ClustersRoute(ApiHandler):
    async def get(self) -> None:
        self.reply({"clusters": await self.call("list_clusters")})


class ClusterRoute(ApiHandler):
    async def get(self, name: str) -> None:
        self.reply(await self.call("get_cluster", name))


class MoveRoute(ApiHandler):
    async def post(self, ref: str) -> None:
        cluster = self.body({"cluster"}, required=("cluster",))["cluster"]
        if not isinstance(cluster, str) or not cluster:
            raise ApiError(400, "BadRequest", f"'cluster' must be a cluster's name: {cluster!r}")
        self.reply(await self.call("move", ref, cluster))


ROUTES: list[tuple[str, type[ApiHandler]]] = [
    ("clusters", ClustersRoute),
    (f"clusters/{_REF}", ClusterRoute),
    (f"jobs/{_REF}/move", MoveRoute),
]
