"""IPython magics: ``%%dagger``, ``%dagger_streams``, ``%dagger_schema MESSAGE``.

``%%dagger [--streams TABLE ...] [--sample FILE ...] [--watermark 10s] [--emit final|updates]
[--name VAR]`` runs the cell's dagger SQL over the current samples (``--streams`` picks
tables; ``--sample`` first loads saved samples, making them current) and returns the
:class:`~workbench.lab.preview.Preview`, which the notebook shows as a table; ``--name`` also
stores it in a variable. ``%dagger_streams`` shows the known streams,
``%dagger_schema MESSAGE`` a message's field tree, ``%dagger_logs [N]`` the last ``N`` lines
of the Spark JVM's log (kept out of the cells).

Loading the extension also makes every :class:`~workbench.exceptions.WorkbenchError` show as
one clear message (``SqlError: ... Line 2, Col: 3.`` with the SQL underlined) rather than a
traceback; the cell still fails, so papermill stops there as usual.
"""

from __future__ import annotations

import contextlib
from typing import Any

from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

import workbench.notebook.api as wb
from workbench.exceptions import WorkbenchError


@magics_class
class DaggerMagics(Magics):
    @magic_arguments()
    @argument("--streams", nargs="+", metavar="TABLE", help="tables whose samples to use")
    @argument("--sample", action="append", metavar="FILE", help="load a saved sample first")
    @argument("--watermark", metavar="DELAY", help="watermark delay, e.g. 10s")
    @argument("--emit", choices=["final", "updates"], help="emit mode for the spec")
    @argument("--name", metavar="VAR", help="also store the preview in this variable")
    @cell_magic
    def dagger(self, line: str, cell: str) -> Any:
        """Run the cell's dagger SQL over the current samples and show the preview."""
        args = parse_argstring(self.dagger, line)
        for path in args.sample or []:
            wb.load_sample(path)
        tables = _tables(args.streams)
        result = wb.preview(cell, tables=tables, watermark=args.watermark, emit=args.emit)
        if args.name and self.shell is not None:
            self.shell.user_ns[args.name] = result
        return result

    @line_magic
    def dagger_streams(self, line: str) -> Any:
        """The known streams and their current samples."""
        return wb.streams()

    @line_magic
    def dagger_logs(self, line: str) -> Any:
        """The last lines of the Spark JVM's log: ``%dagger_logs`` or ``%dagger_logs 200``."""
        text = line.strip() or "50"
        if not text.isdigit():
            raise WorkbenchError(f"%dagger_logs {text}: give a number of lines, e.g. 200")
        return wb.spark_log(int(text))

    @line_magic
    def dagger_schema(self, line: str) -> Any:
        """The field tree of a protobuf message: ``%dagger_schema BookingLogMessage``."""
        name = line.strip()
        if not name:
            raise WorkbenchError("give a message: %dagger_schema BookingLogMessage")
        return wb.schema(name)


def _tables(streams: list[str] | None) -> list[str] | None:
    if not streams:
        return None
    return [t.strip() for item in streams for t in item.split(",") if t.strip()]


def show_workbench_error(
    shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None
) -> list[str]:
    """Custom exception handler: the error's own message, no traceback."""
    stb = [f"{etype.__name__}: {value}"]
    shell._showtraceback(etype, value, stb)
    return stb


def register(ipython: Any) -> None:
    ipython.register_magics(DaggerMagics)
    ipython.set_custom_exc((WorkbenchError,), show_workbench_error)


def unregister(ipython: Any) -> None:
    ipython.set_custom_exc((), None)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext workbench.notebook``: the ``%%dagger`` magics, clean workbench errors,
    the Spark JVM's output in a log file (:func:`spark_log`) rather than in the cells, and
    Spark starting in the background (:func:`start_spark`)."""
    wb._log_to_file()
    register(ipython)
    ipython.observe(_on_exit, names="exit_now")
    wb.start_spark()


def _on_exit(change: dict[str, Any]) -> None:
    """The kernel is shutting down: end Spark's JVM and tidy the working folder now."""
    if change["new"]:
        from workbench.runtime.spark import shutdown

        shutdown()


def unload_ipython_extension(ipython: Any) -> None:
    unregister(ipython)
    with contextlib.suppress(ValueError):
        ipython.unobserve(_on_exit, names="exit_now")
