"""Promotions the Jupyter server runs for the lab extension's promote dialog.

``POST promotions`` ``{"notebook": PATH (relative to the Jupyter root), "team", "name"?,
"cluster"?, "parameters"? (an object, or YAML text of one)}`` checks that the caller may
submit for the team, then runs :func:`workbench.promote.prepare` (papermill, parity) in a
background thread and submits the result to this server's job service as the caller;
it answers ``202`` with the promotion. ``GET promotions/{id}`` answers its state so far:
``{"id", "state": running | done | failed, "notebook", "team", "steps": [{"name", "text",
"time"}], "error": {"type", "message"} | null, "diff": the parity check's differing rows
| null, "job": JOB | null}``. Only the user who started a promotion (or an admin) sees it;
promotions live in the server's memory until it restarts.

Mounted by the Jupyter server extension only (:mod:`workbench.server.extension`): the
notebook is a file of that server's root, the kernel one of its kernels.
"""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.exceptions import ParityError, PromoteError, PromotionNotFoundError
from workbench.jobs import authz
from workbench.promote import owned_by, parameter, prepare
from workbench.server.api import ApiError, ApiHandler, check_schema_version

#: POST promotions body keys
PROMOTE_KEYS = {"notebook", "team", "name", "cluster", "parameters"}
PROMOTE_KEYS |= {"schema_version"}  # a published schema version to pin (default: the latest)
#: promotions kept per server (the oldest finished ones go first)
KEEP = 200


@dataclass
class Promotion:
    """One promotion's request and progress; :meth:`view` is what the API answers."""

    id: str
    user: str
    notebook: str
    team: str
    name: str | None = None
    cluster: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    schema_version: int | None = None
    state: str = "running"
    steps: list[dict[str, Any]] = field(default_factory=list)
    error: dict[str, str] | None = None
    diff: str | None = None
    job: dict[str, Any] | None = None

    def step(self, text: str) -> None:
        """A step as promote reports it (``"parity: 431 preview rows == ..."``)."""
        name = text.split(":", 1)[0] if ":" in text else "step"
        self.steps.append({"name": name, "text": text, "time": time.time()})

    def fail(self, err: Exception) -> None:
        self.error = {"type": type(err).__name__, "message": str(err)}
        if isinstance(err, ParityError):
            self.diff = str(err)
        self.state = "failed"

    def view(self) -> dict[str, Any]:
        keys = ["id", "state", "notebook", "team", "name", "cluster", "schema_version"]
        keys += ["error", "diff", "job"]
        return {key: getattr(self, key) for key in keys} | {"steps": list(self.steps)}


class Promotions:
    """The promotions of one Jupyter server: started in worker threads, kept in memory."""

    def __init__(self, service: Any, root_dir: str | Path, workers: int = 2):
        self.service, self.root = service, Path(root_dir).resolve()
        self.executor = ThreadPoolExecutor(workers, thread_name_prefix="workbench-promote")
        self.lock = threading.Lock()
        self.runs: dict[str, Promotion] = {}

    def notebook_path(self, relative: str) -> Path:
        """The notebook file ``relative`` names under the root (never outside it)."""
        path = (self.root / relative.lstrip("/")).resolve()
        if not path.is_relative_to(self.root):
            raise PromoteError(f"{relative}: not a notebook under the Jupyter root {self.root}")
        if not path.is_file():
            raise PromoteError(
                f"{relative}: no such notebook under the Jupyter root: save it first"
            )
        return path

    def start(self, who: Any, data: dict[str, Any]) -> Promotion:

        authz.check_team(self.service.teams, who, data["team"], "promote a notebook")
        path = self.notebook_path(str(data["notebook"]))
        run = Promotion(
            uuid.uuid4().hex[:12], who.user, str(data["notebook"]), data["team"],
            data.get("name") or None, data.get("cluster") or None, parameters(data),
            data.get("schema_version"),
        )  # fmt: skip
        run.step(f"papermill: running {path.name} in a fresh kernel in promote mode")
        with self.lock:
            self._forget_old()
            self.runs[run.id] = run
        self.executor.submit(self._run, run, path, who)
        return run

    def get(self, who: Any, ref: str) -> Promotion:
        with self.lock:
            run = self.runs.get(ref)
        if run is None or not (run.user == who.user or who.admin):
            raise PromotionNotFoundError(ref)
        return run

    def _run(self, run: Promotion, path: Path, who: Any) -> None:

        try:
            ready = prepare(path, name=run.name, params=run.parameters, emit=run.step)
            run.step(f"submit: {ready.name} for team {run.team}")
            spec = owned_by(ready.spec, run.team)
            run.job = self.service.submit(
                who, name=spec.name, team=run.team, spec_yaml=spec.to_yaml(),
                cluster=run.cluster, notebook=ready.notebook_bytes, parity=ready.parity,
                schema_version=run.schema_version,
            )  # fmt: skip
            job = run.job or {}
            pin = job.get("schema_version") or "bundled"
            run.step(
                f"job: {job.get('name')} version {job.get('version')} on schema version {pin}, "
                f"{job.get('status')}"
            )
            run.state = "done"
        except Exception as err:  # noqa: BLE001 (any failure ends the promotion, shown to its user)
            run.fail(err)

    def _forget_old(self) -> None:
        done = [k for k, r in self.runs.items() if r.state != "running"]
        for key in done[: max(0, len(self.runs) - KEEP + 1)]:
            del self.runs[key]

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def parameters(data: dict[str, Any]) -> dict[str, Any]:
    """The request's papermill parameters: an object, or YAML text of one (values as
    ``workbench promote -p KEY VALUE`` reads them)."""

    given = data.get("parameters") or {}
    found = parameter(given) if isinstance(given, str) else given
    if not isinstance(found, dict):
        raise ApiError(
            400, "BadRequest", "'parameters' must be an object or YAML lines 'key: value'"
        )
    return found


class PromotionsRoute(ApiHandler):
    async def post(self) -> None:
        data = self.body(PROMOTE_KEYS, required=("notebook", "team"))
        parameters(data)  # a bad request is refused before it runs
        check_schema_version(data)
        registry = self.settings["workbench_promotions"]
        run = await self.run(lambda who: registry.start(who, data))
        self.reply(run.view(), status=202)


class PromotionRoute(ApiHandler):
    async def get(self, ref: str) -> None:
        registry = self.settings["workbench_promotions"]
        self.reply((await self.run(lambda who: registry.get(who, ref))).view())


ROUTES: list[tuple[str, type[ApiHandler]]] = [
    ("promotions", PromotionsRoute),
    (r"promotions/([^/]+)", PromotionRoute),
]
