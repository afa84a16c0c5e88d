"""``workbench warehouse``: a warehouse table's files per partition, compaction of its
closed hour partitions, and VACUUM of the files compaction replaced."""

from __future__ import annotations

import argparse
import json
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.durations import to_millis

if TYPE_CHECKING:
    from workbench.warehouse.layout import Partition


def _duration(text: str) -> timedelta:
    try:
        return timedelta(milliseconds=to_millis(text))
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _size(text: str) -> int:
    from workbench.warehouse.compaction import parse_size

    try:
        return parse_size(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _files(n: int) -> str:
    return f"{n:,} file" if n == 1 else f"{n:,} files"


def human(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def files_table(parts: list[Partition]) -> str:
    width = max([len("PARTITION"), *(len(p.label) for p in parts)])
    lines = [f"{'PARTITION':<{width}}  {'FILES':>7}  {'BYTES':>10}  {'AVG FILE':>10}"]
    for p in parts:
        avg = human(p.bytes / p.files)
        lines.append(f"{p.label:<{width}}  {p.files:>7,}  {human(p.bytes):>10}  {avg:>10}")
    files, size = sum(p.files for p in parts), sum(p.bytes for p in parts)
    if parts:
        lines.append(
            f"{len(parts)} partitions, {files:,} files, {human(size)} "
            f"({files / len(parts):,.1f} files, {human(size / len(parts))} per partition)"
        )
    return "\n".join(lines)


def _existing(path: str) -> str:
    """``path``, or a :class:`WarehouseError` before Spark starts when there is nothing."""
    from workbench.exceptions import WarehouseError

    if not Path(path).exists():
        raise WarehouseError(
            path, "no such folder: give a delta sink's table or a parquet sink's folder"
        )
    return path


def cmd_files(args: argparse.Namespace) -> int:
    from workbench.warehouse.delta import session
    from workbench.warehouse.layout import partitions

    path = _existing(args.path)  # before Spark starts
    parts = partitions(session(), path)
    if args.json:
        rows = [{"partition": p.label, "files": p.files, "bytes": p.bytes} for p in parts]
        print(json.dumps(rows, indent=2))
    else:
        print(files_table(parts))
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from workbench.warehouse.compaction import compact
    from workbench.warehouse.delta import session

    path = _existing(args.path)
    done = compact(session(), path, args.older_than, args.target_size)
    after = {p.values: p for p in done.after}
    for p in done.before:
        new = after.get(p.values)
        result = f"{_files(new.files)} ({human(new.bytes)})" if new else "gone"
        print(f"{p.label}: {_files(p.files)} ({human(p.bytes)}) -> {result}")
    files = (sum(p.files for p in done.before), sum(p.files for p in done.after))
    print(
        f"compacted {len(done.before)} closed partitions: {files[0]:,} -> {_files(files[1])} "
        f"in {done.seconds:.1f}s"
    )
    return 0


def cmd_vacuum(args: argparse.Namespace) -> int:
    from workbench.warehouse.compaction import vacuum
    from workbench.warehouse.delta import session

    path = _existing(args.path)
    vacuum(session(), path, args.retain, force=args.force)
    print(f"vacuumed {args.path}: files no snapshot of the last {args.retain} reads are gone")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "warehouse",
        help="files per partition of a warehouse table; compact and vacuum a Delta table",
        description="A dagger's warehouse table (a 'delta' sink's table or a 'parquet' "
        "sink's folder): its files per partition, compaction of its closed hour "
        "partitions into files of a target size, and removal of replaced files.",
    )
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("files", help="files and bytes per partition (Delta or Parquet)")
    q.add_argument("path", help="the table's folder")
    q.add_argument("--json", action="store_true", help="one object per partition")
    q.set_defaults(run=cmd_files)
    q = actions.add_parser(
        "compact",
        help="compact the closed partitions of a Delta table (one transaction)",
        description="Rewrite every closed partition holding more than one file into files "
        "of about --target-size, in one Delta transaction readers never see half of. "
        "Closed: ended at least --older-than before the newest partition's end.",
    )
    q.add_argument("path", help="the Delta table's folder")
    q.add_argument(
        "--older-than", type=_duration, default="1h", help="closed after this (default 1h)"
    )
    q.add_argument("--target-size", type=_size, default="128MB", help="file size to aim at (128MB)")
    q.set_defaults(run=cmd_compact)
    q = actions.add_parser(
        "vacuum",
        help="delete files no snapshot within --retain reads (compacted-away files)",
    )
    q.add_argument("path", help="the Delta table's folder")
    q.add_argument(
        "--retain", type=_duration, default="168h", help="keep files readers of this age need"
    )
    q.add_argument("--force", action="store_true", help="allow a retention under 168h")
    q.set_defaults(run=cmd_vacuum)
