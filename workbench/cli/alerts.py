"""``workbench alerts ...``: alert rules and the job service's alerts and silences.

``alerts test SPEC.yaml (--sample FILE | --table NAME=PATH ...) [--send]`` test-fires the
spec's metric rules over replayed rows (:mod:`workbench.alerts.testfire`) and prints which
alerts would have fired and resolved when; ``--send`` delivers them to the spec's
notifiers, marked ``test="true"``.

``list``, ``history``, ``silence``, ``unsilence`` and ``silences`` talk to the job service
like ``workbench jobs`` does (``--server``/``--token``, else the local one); each user
sees and silences only the alerts of their own teams. Each action adds itself to the
``alerts`` group in :func:`add_commands` (one ``_add_<action>`` function each).
"""

from __future__ import annotations

import argparse

from workbench.cli.args import check_sample, table_arg
from workbench.cli.jobs import _client, _connection, _print_json, _short_time, table
from workbench.exceptions import SpecError, WorkbenchError


def cmd_list(args: argparse.Namespace) -> int:
    alerts = _client(args).list_alerts(team=args.team, firing=args.firing)
    if args.json:
        _print_json(alerts)
    elif not alerts:
        print("no firing alerts" if args.firing else "no alerts")
    else:
        print(alerts_table(alerts))
    return 0


def alerts_table(alerts: list[dict]) -> str:
    rows = [
        (
            a["job"],
            a["rule"],
            _labels(a.get("labels")),
            a["status"] + (f" (silenced by {a['silenced_by']})" if a.get("silenced_by") else ""),
            _short_time(a.get("starts_at")),
            _short_time(a.get("ends_at")) if a.get("ends_at") else "-",
            _labels(a.get("values")),
        )
        for a in alerts
    ]
    header = ("JOB", "RULE", "LABELS", "STATUS", "SINCE", "ENDED", "VALUES")
    return table(header, rows)


def cmd_history(args: argparse.Namespace) -> int:
    events = _client(args).alert_history(args.job, last=args.last)
    if args.json:
        _print_json(events)
    elif not events:
        print(f"no alerts of job {args.job} yet")
    else:
        rows = [
            (_short_time(e["time"]), e["rule"], _labels(e.get("labels")), e["status"],
             _labels(e.get("values")))
            for e in events
        ]  # fmt: skip
        print(table(("TIME", "RULE", "LABELS", "STATUS", "VALUES"), rows))
    return 0


def cmd_silence(args: argparse.Namespace) -> int:
    made = _client(args).silence(
        args.rule,
        labels=parse_labels(args.labels),
        duration=args.duration,
        comment=args.comment,
        team=args.team,
    )
    print(
        f"silence {made['id']}: rule {made['rule']} of team {made['team']}"
        f"{' where ' + _labels(made['labels']) if made['labels'] else ''} until "
        f"{_short_time(made['until'])} UTC (`workbench alerts unsilence {made['id']}` ends it)"
    )
    return 0


def cmd_unsilence(args: argparse.Namespace) -> int:
    ended = _client(args).unsilence(args.id)
    print(f"silence {ended['id']} (rule {ended['rule']} of team {ended['team']}) ended")
    return 0


def cmd_silences(args: argparse.Namespace) -> int:
    found = _client(args).list_silences(expired=args.expired)
    if args.json:
        _print_json(found)
    elif not found:
        print("no silences")
    else:
        rows = [
            (x["id"], x["team"], x["rule"], _labels(x["labels"]) or "(all)",
             _short_time(x["until"]), x["author"], x["comment"])
            for x in found
        ]  # fmt: skip
        print(table(("ID", "TEAM", "RULE", "LABELS", "UNTIL", "AUTHOR", "COMMENT"), rows))
    return 0


def parse_labels(items: list[str] | None) -> dict[str, str]:
    """``["k=v", ...]`` as a dict; an item without ``=`` is an error."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise WorkbenchError(f"--labels takes label=value pairs, not '{item}'")
        out[key.strip()] = value.strip()
    return out


def _labels(data: dict | None) -> str:
    return ",".join(f"{k}={v}" for k, v in (data or {}).items())


def add_commands(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The ``alerts`` command group; returns its actions for more to be added."""
    p = sub.add_parser(
        "alerts",
        help="alert rules: test-fire them; list, silence and trace the alerts of jobs",
        description="Test-fire a spec's alert rules, or talk to the job service at --server "
        "(or $WORKBENCH_SERVER), else to the local one, about its jobs' alerts.",
    )
    _connection(p, None)
    actions = p.add_subparsers(dest="alerts_command", metavar="ACTION", required=True)
    _add_test(actions)
    conn = argparse.ArgumentParser(add_help=False)
    _connection(conn, argparse.SUPPRESS)
    for add in (_add_list, _add_history, _add_silence, _add_unsilence, _add_silences):
        add(actions, conn)
    return actions


def _add_list(actions: argparse._SubParsersAction, conn: argparse.ArgumentParser) -> None:
    q = actions.add_parser("list", help="your teams' alerts, firing first", parents=[conn])
    q.add_argument("--team", help="only this team's alerts")
    q.add_argument("--firing", action="store_true", help="only alerts firing now")
    q.add_argument("--json", action="store_true", help="print the alerts as JSON")
    q.set_defaults(run=cmd_list)


def _add_history(actions: argparse._SubParsersAction, conn: argparse.ArgumentParser) -> None:
    q = actions.add_parser("history", help="a job's alert transitions", parents=[conn])
    q.add_argument("job", metavar="JOB", help="job name or id")
    q.add_argument("--last", type=int, default=100, metavar="N", help="the last N (default 100)")
    q.add_argument("--json", action="store_true", help="print the transitions as JSON")
    q.set_defaults(run=cmd_history)


def _add_silence(actions: argparse._SubParsersAction, conn: argparse.ArgumentParser) -> None:
    q = actions.add_parser("silence", help="mute a rule's alerts for a while", parents=[conn])
    q.add_argument("rule", metavar="RULE", help="the alert rule's name")
    q.add_argument(
        "--labels", nargs="+", metavar="K=V", help="only alerts with these labels (default all)"
    )
    q.add_argument("--for", dest="duration", required=True, metavar="DURATION",
                   help="how long, e.g. 30m, 2h, 1d")  # fmt: skip
    q.add_argument("--comment", required=True, help="why (kept with the silence)")
    q.add_argument("--team", help="the team whose alerts to mute (default: your only team)")
    q.set_defaults(run=cmd_silence)


def _add_unsilence(actions: argparse._SubParsersAction, conn: argparse.ArgumentParser) -> None:
    q = actions.add_parser("unsilence", help="end a silence now", parents=[conn])
    q.add_argument("id", metavar="ID", help="the silence's id (see `alerts silences`)")
    q.set_defaults(run=cmd_unsilence)


def _add_silences(actions: argparse._SubParsersAction, conn: argparse.ArgumentParser) -> None:
    q = actions.add_parser("silences", help="your teams' silences in force", parents=[conn])
    q.add_argument("--expired", action="store_true", help="ended ones too")
    q.add_argument("--json", action="store_true", help="print the silences as JSON")
    q.set_defaults(run=cmd_silences)


def cmd_test(args: argparse.Namespace) -> int:
    from workbench import spec as spec_module
    from workbench.alerts.testfire import evaluate, rules_of, send
    from workbench.lab.replay import check_tables, plan_recordings, sample_plan
    from workbench.runtime.spark import session

    if bool(args.table) == bool(args.sample):
        raise WorkbenchError("give recordings (--table NAME=PATH) or samples (--sample FILE)")
    spec = spec_module.load(args.spec)
    rules = rules_of(spec, None)  # before Spark starts
    if args.table:
        check_tables([name for name, _ in args.table], None, spec)
    for sample in args.sample or []:
        check_sample(sample)
    try:
        if args.sample:
            with sample_plan(session(), args.sample, spec=spec) as (plan, _):
                test = evaluate(plan.result, rules, spec.name)
        else:
            plan, _ = plan_recordings(
                None, dict(args.table), spec=spec, rowtime_field=args.rowtime_field
            )
            test = evaluate(plan.result, rules, spec.name)
    except SpecError as err:  # a rule naming no result column
        raise spec_module.located(err, args.spec) from None
    print(test)
    if args.send:
        sent = send(test, spec)
        print(f"sent {sent} test notification(s)")
    return 0


def _add_test(actions: argparse._SubParsersAction) -> None:
    q = actions.add_parser(
        "test",
        help="test-fire a spec's alert rules over recordings or saved samples",
        description="Replay the spec's SQL over recordings (--table) or the offsets of saved "
        "samples (--sample), evaluate its metric alert rules window by window as the job "
        "does, and print which alerts would have fired and resolved when.",
    )
    q.add_argument("spec", help="a dagger spec (YAML) with an 'alerts:' list")
    q.add_argument(
        "--table",
        action="append",
        type=table_arg,
        metavar="NAME=PATH",
        help="a recording for table NAME (repeatable)",
    )
    q.add_argument("--sample", action="append", metavar="FILE", help="a saved sample (repeatable)")
    q.add_argument(
        "--rowtime-field",
        metavar="FIELD",
        default=None,
        help="field of the recordings holding the event time (default: the spec's)",
    )
    q.add_argument(
        "--send",
        action="store_true",
        help='deliver each transition to the spec\'s notifiers, labelled test="true"',
    )
    q.set_defaults(run=cmd_test)
