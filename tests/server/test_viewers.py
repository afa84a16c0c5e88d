"""What a dashboard viewer may reach in a Jupyter server, decided on the request's path
(the authorizer's pure part), and the areas cell Voila's prelaunch hook injects."""

from __future__ import annotations

import pytest

from workbench.dashboard.viewers import relative_path, viewer_may
from workbench.dashboard.voila_hooks import areas_cell_source

pytestmark = pytest.mark.unit

KERNEL = "0b1c2d3e-aaaa-bbbb-cccc-0123456789ab"


@pytest.mark.parametrize(
    "path",
    [
        "voila/render/dashboard.ipynb",
        "voila/static/voila.js",
        "voila/templates/workbench/static/x.css",
        "voila/labextensions/@jupyter-widgets/jupyterlab-manager/static/a.js",
        "voila/api/themes/@jupyterlab/theme-light-extension/index.css",
        f"voila/api/shutdown/{KERNEL}",
        f"api/kernels/{KERNEL}/channels",
        "static/favicon.ico",
        "login",
        "logout",
    ],
)
def test_a_viewer_may_reach_what_the_dashboard_needs(path):
    assert viewer_may(path)


@pytest.mark.parametrize(
    "path",
    [
        "lab",
        "lab/tree/x.ipynb",
        "tree",
        "api/contents",
        "api/kernels",
        f"api/kernels/{KERNEL}/restart",
        "api/sessions",
        "api/terminals",
        "workbench/api/jobs",
        "workbench/api/me",
        "workbench/metrics",
        "voila/render/team-notebook.ipynb",
        "voila/render/dashboard.ipynb/../secret.ipynb",
        "voila/tree",
        "voila/files/service.yaml",
        "voila/api/contents",
        "static/../lab",
        "files/dashboard.ipynb",
    ],
)
def test_a_viewer_is_refused_everything_else(path):
    assert not viewer_may(path)


def test_a_viewer_may_read_a_kernels_model_only():
    assert viewer_may(f"api/kernels/{KERNEL}")
    assert not viewer_may(f"api/kernels/{KERNEL}", method="DELETE")
    assert not viewer_may(f"api/kernels/{KERNEL}/interrupt", method="POST")


def test_other_dashboards_and_the_base_url():
    assert viewer_may("voila/render/city/other.ipynb", ["city/other.ipynb"])
    assert not viewer_may("voila/render/dashboard.ipynb", ["city/other.ipynb"])

    class Request:
        path = "/user/alice/voila/render/dashboard.ipynb"

    class Handler:
        settings = {"base_url": "/user/alice/"}
        request = Request()

    assert relative_path(Handler()) == "voila/render/dashboard.ipynb"


def test_the_areas_cell_sets_the_dashboards_areas(monkeypatch):
    monkeypatch.delenv("WORKBENCH_DASHBOARD_AREAS", raising=False)
    exec(areas_cell_source(frozenset({"surabaya", "bandung"})), {})  # noqa: S102
    import os

    assert os.environ.pop("WORKBENCH_DASHBOARD_AREAS") == "bandung,surabaya"
