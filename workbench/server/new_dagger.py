"""``GET templates/new-dagger?name=NAME``: the "new dagger" notebook for NAME (nbformat
JSON, as ``workbench new NAME`` writes it), for the lab extension's launcher card and
file-browser command, which save it where the user is. Mounted by the Jupyter server
extension only."""

from __future__ import annotations

import re

from workbench.server.api import ApiError, ApiHandler

#: a dagger name: it becomes the notebook's file name and the job's default name
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,62}")


class NewDaggerRoute(ApiHandler):
    async def get(self) -> None:
        from workbench.notebook.scaffold import for_this_kernel, template

        self.caller()  # Jupyter's login, as every route
        name = self.get_query_argument("name", "my-dagger")
        if not NAME.fullmatch(name):
            raise ApiError(
                400,
                "BadRequest",
                f"'{name[:80]}' is not a dagger name: use letters, digits, '-' and '_', "
                "starting with a letter (at most 63)",
            )
        self.reply(for_this_kernel(template(name)))


ROUTES: list[tuple[str, type[ApiHandler]]] = [("templates/new-dagger", NewDaggerRoute)]
