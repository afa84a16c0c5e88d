"""Secrets in specs: ``${env:NAME}`` and ``${file:PATH}`` references, resolved only in the job.

A spec names a secret instead of holding it, anywhere inside a string value::

    kafka_options: {sasl.jaas.config: "...password=\"${env:KAFKA_PASSWORD}\";"}
    sinks: [{type: influx, url: ..., token: "${file:/run/secrets/influx-token}"}]

``${env:NAME}`` is the job process's environment variable ``NAME``; ``${file:PATH}`` the
content of the file ``PATH`` (``~`` expanded; one trailing newline dropped). ``$${`` is a
literal ``${``. Specs are stored, shown and sent with the references as written; only the
job process (:mod:`workbench.jobs.runner`) calls :func:`resolve`, and keeps the values in
memory. Errors (:class:`~workbench.exceptions.SecretError`) name the reference, never a
value; :func:`redact` masks resolved values in text a job is about to log.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from workbench.exceptions import SecretError
from workbench.settings import env_var

#: a reference: ``${kind:argument}``; ``$${`` (escaped) is not one
_REFERENCE = re.compile(r"(?<!\$)\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KINDS = ("env", "file")
MASK = "***"


def references(text: str) -> list[str]:
    """Every reference in ``text`` as written (``${env:NAME}``...), in order."""
    return [m.group(0) for m in _REFERENCE.finditer(text)]


def check(text: str) -> list[str]:
    """The references in ``text``; a malformed one (unknown kind, bad name, empty path)
    raises :class:`SecretError`."""
    found = references(text)
    for ref in found:
        _parse(ref)
    return found


def _parse(ref: str) -> tuple[str, str]:
    kind, sep, arg = ref[2:-1].partition(":")
    if not sep or kind not in KINDS:
        raise SecretError(ref, "write ${env:NAME} or ${file:/absolute/path}")
    if kind == "env" and not _ENV_NAME.match(arg):
        raise SecretError(ref, "an environment variable name is letters, digits and '_'")
    if kind == "file" and not arg.strip():
        raise SecretError(ref, "give the file's path, e.g. ${file:/run/secrets/token}")
    return kind, arg


def value_of(ref: str) -> str:
    """The value a well-formed reference stands for, read now."""
    kind, arg = _parse(ref)
    if kind == "env":
        value = env_var(arg)
        if value is None:
            raise SecretError(
                ref,
                f"environment variable {arg} is not set where the job runs; set it in "
                "the job service's environment",
            )
        return value
    path = Path(arg).expanduser()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise SecretError(
            ref,
            f"cannot read {path} ({err.strerror or type(err).__name__}); the file must "
            "be readable by the job service's user",
        ) from None
    return text[:-1] if text.endswith("\n") else text


def resolve_text(text: str, found: dict[str, str] | None = None) -> str:
    """``text`` with every reference replaced by its value; ``found`` collects them."""

    def one(match: re.Match[str]) -> str:
        value = value_of(match.group(0))
        if found is not None:
            found[match.group(0)] = value
        return value

    return _REFERENCE.sub(one, text).replace("$${", "${")


def resolve(obj: Any, found: dict[str, str] | None = None) -> Any:
    """A copy of ``obj`` (str, dict, list, tuple; other values as they are) with every
    reference in its strings (keys too) resolved. ``found`` collects reference -> value."""
    if isinstance(obj, str):
        return resolve_text(obj, found)
    if isinstance(obj, dict):
        return {resolve(k, found): resolve(v, found) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return type(obj)(resolve(v, found) for v in obj)
    return obj


def redact(values: Iterable[str]) -> Callable[[str], str]:
    """A function masking each of ``values`` (longest first) in a text."""
    secrets = sorted({v for v in values if v}, key=len, reverse=True)

    def mask(text: str) -> str:
        for value in secrets:
            text = text.replace(value, MASK)
        return text

    return mask
