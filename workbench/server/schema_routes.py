"""``GET schemas/versions``, ``POST schemas/versions``: the job service's published schema
versions (:mod:`workbench.schemas.versions`, in the service's ``$WORKBENCH_HOME``), the ones
its jobs pin.

``GET`` answers ``{"versions": [{number, sha256, created_at, author, note, source,
breaking, messages}]}`` to every signed-in user but viewers. ``POST`` takes
``{"descriptor_set": base64 of a FileDescriptorSet, "source"?, "note"?,
"allow_breaking"?}`` from an admin or a member of a team: the set is checked against the
latest version (:func:`workbench.schemas.publishing.publish`), refused with a 400 whose
``error.changes`` lists the breaking changes (as ``schemas check --json``) unless
``allow_breaking`` (admins only: it changes what every team's next submit pins); the
author is the caller. It answers the version with ``new`` (201; 200 when the latest
version already holds the set).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from google.protobuf.descriptor_pb2 import FileDescriptorSet
from google.protobuf.message import DecodeError

from workbench.exceptions import SchemaForbiddenError
from workbench.schemas import publishing
from workbench.server.api import ApiError, ApiHandler

PUBLISH_KEYS = {"descriptor_set", "source", "note", "allow_breaking"}


class SchemaVersionsRoute(ApiHandler):
    async def get(self) -> None:
        store = self.service.schemas
        self.reply({"versions": await self.run(lambda who: publishing.listing(store))})

    async def post(self) -> None:
        body = self.body(PUBLISH_KEYS, required=("descriptor_set",))
        files = _descriptor_set(body["descriptor_set"])
        allow = body.get("allow_breaking") is True
        store = self.service.schemas

        def publish(who: Any) -> dict:
            if not (who.admin or who.teams) or (allow and not who.admin):
                raise SchemaForbiddenError(who.user, allow)
            source, note = str(body.get("source") or "http"), str(body.get("note") or "")
            record, new = publishing.publish(store, files, source, note, who.user, allow)
            return {**record.to_dict(), "messages": publishing.messages(files), "new": new}

        answer = await self.run(publish)
        self.reply(answer, 201 if answer["new"] else 200)


def _descriptor_set(text: Any) -> FileDescriptorSet:
    try:
        return FileDescriptorSet.FromString(base64.b64decode(str(text), validate=True))
    except (binascii.Error, DecodeError) as err:
        raise ApiError(
            400,
            "BadRequest",
            f"descriptor_set must be a serialized FileDescriptorSet in base64 ({err}); "
            "`workbench schemas publish` sends one",
        ) from None


ROUTES: list[tuple[str, type[ApiHandler]]] = [("schemas/versions", SchemaVersionsRoute)]
