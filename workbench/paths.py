"""Where the workbench finds what it ships and keeps what it builds and fetches.

State (jars, descriptor sets, the broker's data, logs): ``$WORKBENCH_HOME`` when set;
``.workbench`` in a source checkout; installed from a wheel, the user's cache folder
(platformdirs: ``~/.cache/dagger-workbench`` on Linux, ``$XDG_CACHE_HOME`` honoured).

Shipped files: the source tree's top-level ``kernels/`` and ``templates/`` are the sources;
the wheel carries them inside the package as ``workbench/data/kernels`` and
``workbench/data/templates`` (pyproject's ``force-include``), and :func:`shipped` finds them
in either place.
"""

from __future__ import annotations

from pathlib import Path

from workbench.exceptions import SetupError
from workbench.settings import settings, variable

PACKAGE_DIR = Path(__file__).resolve().parent
#: The source checkout holding the package, when it is one.
CHECKOUT = PACKAGE_DIR.parent
APP_NAME = "dagger-workbench"


def in_checkout() -> bool:
    """Whether the package runs from a source checkout (``pip install -e`` or PYTHONPATH)."""
    return (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "kernels").is_dir()


def home() -> Path:
    env = settings().home
    if env:
        path = env.expanduser()
    elif in_checkout():
        path = CHECKOUT / ".workbench"
    else:
        from platformdirs import user_cache_path

        path = user_cache_path(APP_NAME, appauthor=False)
    path.mkdir(parents=True, exist_ok=True)
    return path


def subdir(name: str) -> Path:
    path = home() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def shipped(relative: str) -> Path:
    """A file or folder of the top-level ``kernels/`` or ``templates/`` (e.g.
    ``"templates/new-dagger.ipynb"``): in the installed package, else in the checkout."""
    for root in (PACKAGE_DIR / "data", CHECKOUT):
        path = root / relative
        if path.exists():
            return path
    raise SetupError(
        f"{relative} is missing from the installed package ({PACKAGE_DIR / 'data'}): "
        "reinstall it (pip install --force-reinstall dagger-workbench)"
    )


#: Set by ``workbench promote`` in the kernel's environment: the folder a notebook records
#: into while papermill executes it (:mod:`workbench.notebook.promoting`).
PROMOTE_DIR_ENV = variable("promote_dir")


def promote_folder() -> Path | None:
    """The promote record folder when promote mode is on, else None."""
    return settings().promote_dir
