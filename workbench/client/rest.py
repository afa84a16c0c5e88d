"""``ServiceClient``: the job service over HTTP, for the CLI, ``promote`` and notebooks.

Where it connects: ``url``/``token`` given, else ``$WORKBENCH_SERVER`` /
``$WORKBENCH_TOKEN``, else the embedded default (:mod:`workbench.client.embedded`: the
local service of ``$WORKBENCH_HOME/service``, started on first use and reused while it
lives; its owner token makes the local user an admin). The methods mirror
:class:`workbench.service.job_service.JobService` without its ``who`` argument; an error answer
raises the service's own exception class (``JobNotFoundError``, ``JobForbiddenError``...)
with the server's message.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import requests

from workbench import exceptions
from workbench.exceptions import ServiceRequestError, ServiceUnreachableError, WorkbenchError
from workbench.settings import settings, variable

SERVER_ENV = variable("server")
TOKEN_ENV = variable("token")
API = "workbench/api/"
#: Job statuses after which a followed log gets no more lines.
FINAL = {"STOPPED", "FAILED"}


class ServiceClient:
    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 180):
        url = url or settings().server
        token = token or settings().token
        if not url:
            from workbench.client.embedded import ensure

            url, local = ensure()
            token = token or local
        self.url = url.rstrip("/") + "/"
        self.timeout = timeout
        self.http = requests.Session()
        if token:
            self.http.headers["Authorization"] = f"token {token}"

    # -- jobs -------------------------------------------------------------------------
    def list_jobs(self, team: str | None = None, archived: bool = False) -> list[dict]:
        params = {"team": team} if team else {}
        if archived:
            params["all"] = "1"
        return self._get("jobs", params=params or None)["jobs"]

    def get_job(self, ref: int | str) -> dict:
        return self._get(_job(ref))

    def submit(
        self,
        *,
        name: str,
        team: str,
        spec_yaml: str,
        cluster: str | None = None,
        notebook: bytes | None = None,
        parity: dict | None = None,
        note: str = "",
        schema_version: int | None = None,
    ) -> dict:
        body: dict[str, Any] = {"name": name, "team": team, "spec_yaml": spec_yaml, "note": note}
        if schema_version is not None:
            body["schema_version"] = schema_version
        if cluster:
            body["cluster"] = cluster
        if notebook is not None:
            body["notebook"] = base64.b64encode(notebook).decode("ascii")
        if parity is not None:
            body["parity"] = parity
        return self._send("POST", "jobs", body)

    def edit(
        self, ref: int | str, spec_yaml: str, note: str = "", schema_version: int | None = None
    ) -> dict:
        body: dict[str, Any] = {"spec_yaml": spec_yaml, "note": note}
        if schema_version is not None:
            body["schema_version"] = schema_version
        return self._send("PUT", _job(ref), body)

    def stop(self, ref: int | str) -> dict:
        return self._send("POST", _job(ref, "stop"))

    def start(self, ref: int | str) -> dict:
        return self._send("POST", _job(ref, "start"))

    def restart(self, ref: int | str) -> dict:
        return self._send("POST", _job(ref, "restart"))

    def archive(self, ref: int | str) -> dict:
        return self._send("POST", _job(ref, "archive"))

    def unarchive(self, ref: int | str) -> dict:
        return self._send("POST", _job(ref, "unarchive"))

    def delete(self, ref: int | str) -> dict:
        return self._send("DELETE", _job(ref))

    def move(self, ref: int | str, cluster: str) -> dict:
        return self._send("POST", _job(ref, "move"), {"cluster": cluster})

    def reload_config(self) -> dict:
        """The service reads service.yaml again (admins): what it applied."""
        return self._send("POST", "service/reload")

    def list_clusters(self) -> list[dict]:
        return self._get("clusters")["clusters"]

    def get_cluster(self, name: str) -> dict:
        return self._get(f"clusters/{quote(name, safe='')}")

    def versions(self, ref: int | str) -> list[dict]:
        return self._get(_job(ref, "versions"))["versions"]

    def health_url(self, ref: int | str) -> str:
        """The job's health page (a browser logs in once with its access token)."""
        return f"{self.url}workbench/{_job(ref, 'health')}"

    def rollback(self, ref: int | str, version: int) -> dict:
        return self._send("POST", _job(ref, "rollback"), {"version": int(version)})

    def notebook(self, ref: int | str, version: int) -> bytes:
        return self._request("GET", _job(ref, f"versions/{int(version)}/notebook")).content

    def progress(self, ref: int | str, last: int = 20) -> list[dict]:
        return self._get(_job(ref, "progress"), params={"last": last})["progress"]

    def events(self, ref: int | str, last: int = 100) -> list[dict]:
        return self._get(_job(ref, "events"), params={"last": last})["events"]

    def me(self) -> dict:
        return self._get("me")

    # -- Kafka clusters ---------------------------------------------------------------
    def kafka_clusters(self) -> list[dict]:
        return self._get("kafka-clusters")["kafka_clusters"]

    def failover(self, ref: int | str, kafka_cluster: str, reason: str = "") -> dict:
        body = {"kafka_cluster": kafka_cluster, "reason": reason}
        return self._send("POST", _job(ref, "failover"), body)

    def kafka_cluster(self, name: str) -> dict:
        """One named Kafka cluster and whether it answers now (``reachable``...)."""
        return self._get(f"kafka-clusters/{quote(name, safe='')}")

    # -- alerts -----------------------------------------------------------------------
    def list_alerts(self, team: str | None = None, firing: bool = False) -> list[dict]:
        params: dict[str, Any] = {"firing": 1} if firing else {}
        if team:
            params["team"] = team
        return self._get("alerts", params=params)["alerts"]

    def alert_history(self, ref: int | str, last: int = 100) -> list[dict]:
        return self._get(_job(ref, "alerts"), params={"last": last})["alerts"]

    def silence(
        self,
        rule: str,
        labels: dict[str, str] | None = None,
        duration: str | int | float = "1h",
        comment: str = "",
        team: str | None = None,
    ) -> dict:
        body: dict[str, Any] = {"rule": rule, "labels": labels or {}, "for": duration}
        body["comment"] = comment
        if team:
            body["team"] = team
        return self._send("POST", "silences", body)

    def list_silences(self, expired: bool = False) -> list[dict]:
        return self._get("silences", params={"expired": 1} if expired else None)["silences"]

    def get_silence(self, ref: int | str) -> dict:
        return self._get(f"silences/{quote(str(ref), safe='')}")

    def unsilence(self, ref: int | str) -> dict:
        return self._request("DELETE", f"silences/{quote(str(ref), safe='')}").json()

    # -- logs -------------------------------------------------------------------------
    def logs(
        self, ref: int | str, *, run: str | None = None, offset: int = 0, limit_bytes: int = 65536
    ) -> dict:
        """A piece of a run's log: ``{"run", "offset", "next_offset", "text", "running"}``."""
        params: dict[str, Any] = {"offset": offset, "limit": limit_bytes}
        if run:
            params["run"] = run
        return self._get(_job(ref, "logs"), params=params)

    def follow_logs(
        self, ref: int | str, *, run: str | None = None, offset: int = 0, poll_s: float = 1.0
    ) -> Iterator[str]:
        """The log's text as it grows, across the job's runs unless ``run`` is given; ends
        once the job is STOPPED or FAILED (or that run ended) and everything is read."""
        current = run
        while True:
            piece = self.logs(ref, run=run, offset=offset)
            if current is not None and piece["run"] != current:
                current, offset = piece["run"], 0  # a new run began: read it from its start
                continue
            current = piece["run"]
            if piece["text"]:
                yield piece["text"]
                offset = piece["next_offset"]
                continue
            if not piece["running"] and self._finished(ref, run, current):
                return
            time.sleep(poll_s)

    def _finished(self, ref: int | str, run: str | None, current: str | None) -> bool:
        if run is not None:
            return True
        job = self.get_job(ref)
        newer = (job.get("run") or {}).get("id")
        return job["status"] in FINAL and (newer is None or str(newer) == str(current))

    # -- schema versions (:mod:`workbench.server.schema_routes`) -------------------------
    def schema_versions(self) -> list[dict]:
        return self._get("schemas/versions")["versions"]

    def publish_schemas(
        self, descriptor_set: bytes, source: str, note: str = "", allow_breaking: bool = False
    ) -> dict:
        """Publish a serialized FileDescriptorSet: the version, with ``new``."""
        body = {"descriptor_set": base64.b64encode(descriptor_set).decode("ascii"),
                "source": source, "note": note, "allow_breaking": allow_breaking}  # fmt: skip
        return self._send("POST", "schemas/versions", body)

    # -- HTTP -------------------------------------------------------------------------
    def _get(self, path: str, params: dict | None = None) -> Any:
        return self._request("GET", path, params=params).json()

    def _send(self, method: str, path: str, body: dict | None = None) -> Any:
        return self._request(method, path, json=body or {}).json()

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        url = self.url + API + path
        try:
            answer = self.http.request(method, url, timeout=self.timeout, **kwargs)
        except requests.ConnectionError:
            raise ServiceUnreachableError(
                f"no job service answers at {self.url}: start one with `workbench serve`, "
                f"or unset {SERVER_ENV} to use the local one"
            ) from None
        if answer.status_code >= 400:
            raise _error(answer)
        return answer


def _job(ref: int | str, tail: str = "") -> str:
    return f"jobs/{quote(str(ref), safe='')}" + (f"/{tail}" if tail else "")


def _error(answer: requests.Response) -> WorkbenchError:
    """The service's error as the exception class it raised (the server's message)."""
    try:
        error = answer.json()["error"]
        status, kind, message = int(error["status"]), str(error["type"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        text = answer.text.strip()[:200]
        return ServiceRequestError(
            answer.status_code,
            "HTTPError",
            f"{answer.url} answered HTTP {answer.status_code}: {text}: is it a job service?",
        )
    cls = getattr(exceptions, kind, None)
    if isinstance(cls, type) and issubclass(cls, WorkbenchError):
        err = cls.__new__(cls)
        WorkbenchError.__init__(err, message)
        err.status = status  # type: ignore[attr-defined]
        return err
    return ServiceRequestError(status, kind, message)
