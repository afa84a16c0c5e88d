"""``GET templates/new-dagger?name=NAME``: the "new dagger" notebook for NAME (nbformat
JSON, as ``workbench new NAME`` writes it), for the lab extension's launcher card and
file-browser command, which save it where the user is. Mounted by the Jupyter server
extension only."""

from __future__ import annotations

from workbench.server.api import ApiError, ApiHandler


class NewDaggerRoute(ApiHandler):
    async def get(self) -> None:
        from workbench.notebook.scaffold import for_this_kernel, name_problem, template

        self.caller()  # Jupyter's login, as every route
        name = self.get_query_argument("name", "my-dagger")
        problem = name_problem(name)
        if problem:
            raise ApiError(400, "BadRequest", problem)
        self.reply(for_this_kernel(template(name)))


ROUTES: list[tuple[str, type[ApiHandler]]] = [("templates/new-dagger", NewDaggerRoute)]
