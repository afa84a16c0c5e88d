"""``workbench alerts``: alert rules from the command line.

``alerts test SPEC.yaml (--sample FILE | --table NAME=PATH ...) [--send]`` test-fires the
spec's metric rules over replayed rows (:mod:`workbench.alerts.testfire`) and prints which
alerts would have fired and resolved when; ``--send`` delivers them to the spec's
notifiers, marked ``test="true"``. Each action adds itself to the ``alerts`` group in
:func:`add_commands` (one ``_add_<action>`` function each).
"""

from __future__ import annotations

import argparse

from workbench.exceptions import SpecError, WorkbenchError


def cmd_test(args: argparse.Namespace) -> int:
    from workbench import spec as spec_module
    from workbench.alerts.testfire import evaluate, rules_of, send
    from workbench.cli import _check_sample
    from workbench.replay import check_tables, plan_recordings, sample_plan
    from workbench.spark import session

    if bool(args.table) == bool(args.sample):
        raise WorkbenchError("give recordings (--table NAME=PATH) or samples (--sample FILE)")
    spec = spec_module.load(args.spec)
    rules = rules_of(spec, None)  # before Spark starts
    if args.table:
        check_tables([name for name, _ in args.table], None, spec)
    for sample in args.sample or []:
        _check_sample(sample)
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


def add_commands(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The ``alerts`` command group; returns its actions for more to be added."""
    p = sub.add_parser(
        "alerts",
        help="alert rules: test-fire them on replayed rows",
        description="Alert rules of dagger specs.",
    )
    actions = p.add_subparsers(dest="alerts_command", metavar="ACTION", required=True)
    _add_test(actions)
    return actions


def _add_test(actions: argparse._SubParsersAction) -> None:
    from workbench.cli import _table_arg

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
        type=_table_arg,
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
