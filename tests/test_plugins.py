"""Extension points (:class:`workbench.plugins.Plugins`): built-ins imported on the first
question, unknown names answered with the known ones."""

from __future__ import annotations

import sys
import textwrap

import pytest

from workbench.exceptions import UnknownNameError

pytestmark = pytest.mark.unit


@pytest.fixture
def widgets(tmp_path, monkeypatch):
    """A table of widgets whose built-ins live in a module that imports the table."""
    (tmp_path / "wb_widget_table.py").write_text(
        textwrap.dedent(
            """
            from workbench.plugins import Plugins

            WIDGETS = Plugins("widget", ["wb_widget_builtins"], fold=True)
            """
        )
    )
    (tmp_path / "wb_widget_builtins.py").write_text(
        textwrap.dedent(
            """
            from wb_widget_table import WIDGETS

            WIDGETS.add("Gear", 1)
            WIDGETS.add("sprocket", 2)
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield __import__("wb_widget_table").WIDGETS
    for name in ("wb_widget_table", "wb_widget_builtins"):
        sys.modules.pop(name, None)


def test_built_ins_load_on_the_first_question_and_names_keep_their_case(widgets):
    assert "wb_widget_builtins" not in sys.modules
    assert widgets.names() == ["Gear", "sprocket"]
    assert (widgets.get("gear"), widgets.find("SPROCKET"), widgets.find("cog")) == (1, 2, None)
    assert list(widgets) == [1, 2] and "GEAR" in widgets


def test_an_unknown_name_lists_the_known_ones_and_the_closest(widgets):
    with pytest.raises(
        UnknownNameError,
        match=r"Unknown widget 'sprockt'\. Did you mean sprocket\? Known: Gear, sprocket\.",
    ):
        widgets.get("sprockt")


def test_a_plugin_added_later_is_found_and_can_be_removed(widgets):
    widgets.add("cog", 3)
    assert widgets.names() == ["cog", "Gear", "sprocket"]
    widgets.remove("COG")
    assert "cog" not in widgets


def test_each_extension_point_answers_an_unknown_name_in_its_own_words():
    from workbench.chaos.faults import FAULTS
    from workbench.dashboard.errors import StoreError
    from workbench.dashboard.stores import open_store
    from workbench.exceptions import ChaosError, SpecError
    from workbench.kinds import KINDS

    with pytest.raises(ChaosError, match=r"No fault 'latncy'\. Did you mean latency\?"):
        FAULTS.get("latncy")
    with pytest.raises(SpecError, match=r"unknown kind 'qualty'; one of dagger, quality"):
        KINDS.of({"kind": "qualty"})
    with pytest.raises(StoreError, match=r"Unknown store kind 'influx'\. Did you mean influx1\?"):
        open_store("influx:http://127.0.0.1:8086/db")
