"""nbgrader, called through its own API (``NbGraderAPI``) on a course directory.

nbgrader's gradebook runs the ``alembic`` executable, which lives beside this Python in a
virtualenv that was not activated: ``nbgrader_env`` puts that folder first on ``PATH`` while
nbgrader runs.

Kernels talk over Unix sockets in a folder of their own (``KernelManager.transport = "ipc"``),
not TCP ports: jupyter_client picks a free TCP port by binding and releasing it, so kernels
started at once by several autograde processes can be handed the same port and one dies with
"Address already in use" (seen in CI with two workers).

Autograding executes each notebook without storing its widgets' state
(``Execute.store_widget_state = False``): nbclient otherwise saves every live widget's state in
the graded notebook, and each plotly ``FigureWidget`` (an anywidget) carries its 5 MB JavaScript
bundle there (``_esm``), which made each autograded notebook 5-20 MB. No grade reads it.

nbgrader's ``Gradebook.add_submission`` builds its rows before adding them to the session, and
SQLAlchemy 2 warns three times on every autograde (``SAWarning: Object of type
<SubmittedAssignment> not in session...``); nothing is lost (nbgrader adds them next).
``quiet_gradebook`` ignores exactly that warning, raised from ``nbgrader.api``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CELL_TIMEOUT_SECONDS = 300
"""Seconds a cell may run while autograding (nbval's timeout in CI)."""

CONFIG = f'''"""nbgrader's configuration for this course (written by python -m memorykit.classroom course release)."""

# Run nbgrader from this folder (the course root; the gradebook is gradebook.db here).
c = get_config()  # noqa: F821
# a lesson cell may run for minutes (nbval allows {CELL_TIMEOUT_SECONDS} s in CI)
c.Execute.timeout = {CELL_TIMEOUT_SECONDS}
# no widget state in graded notebooks: each plotly FigureWidget's would add its 5 MB bundle
c.Execute.store_widget_state = False
c.ClearSolutions.code_stub = {{"python": "# YOUR CODE HERE\\nraise NotImplementedError()"}}
'''


@contextmanager
def nbgrader_env() -> Iterator[None]:
    """``PATH`` with this interpreter's folder first (nbgrader calls ``alembic``)."""
    before = os.environ.get("PATH", "")
    os.environ["PATH"] = str(Path(sys.executable).parent) + os.pathsep + before
    try:
        yield
    finally:
        os.environ["PATH"] = before


_SOCKET_PATH_ROOM = 80
"""Longest socket folder used: Linux allows 107 bytes per socket path, and jupyter_client
appends ``/k-<port>`` to it."""


@contextmanager
def kernel_sockets() -> Iterator[str]:
    """A private folder for the kernels' Unix sockets, removed afterwards; yields the path
    prefix jupyter_client appends ``-<port>`` to (short: a socket path has ~100 characters)."""
    folder = tempfile.mkdtemp(prefix="mk-kernel-")
    if len(folder) > _SOCKET_PATH_ROOM:  # a long TMPDIR: fall back to /tmp, which is short
        os.rmdir(folder)
        folder = tempfile.mkdtemp(prefix="mk-kernel-", dir="/tmp")
    try:
        yield os.path.join(folder, "k")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def api(root: Path, sockets: str | None = None, cell_timeout: float = CELL_TIMEOUT_SECONDS) -> Any:
    """nbgrader's API on the course at ``root`` (configured as ``nbgrader_config.py`` says);
    with ``sockets``, kernels use Unix sockets at that path prefix instead of TCP ports."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.db_url = f"sqlite:///{root}/gradebook.db"
    config.Execute.timeout = int(cell_timeout) + 1  # whole seconds, never 0 (no limit)
    config.Execute.store_widget_state = False
    config.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    if sockets is not None:
        config.KernelManager.transport = "ipc"
        config.KernelManager.ip = sockets
    return NbGraderAPI(CourseDirectory(config=config), config=config)


@contextmanager
def quiet_gradebook() -> Iterator[None]:
    """nbgrader's gradebook without SQLAlchemy's "not in session" warnings from
    ``nbgrader.api`` (the module says why); every other warning is shown as before."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session",
                                module=r"nbgrader\.api")
        yield


def run(root: Path, action: str, *args: str, cell_timeout: float = CELL_TIMEOUT_SECONDS) -> None:
    """``NbGraderAPI.<action>(*args)``; raises ``RuntimeError`` with nbgrader's log if it fails."""
    with nbgrader_env(), quiet_gradebook(), kernel_sockets() as sockets:
        result = getattr(api(root, sockets, cell_timeout), action)(*args, force=True, create=True)
    if not result.get("success"):
        raise RuntimeError(f"nbgrader {action} {' '.join(args)} failed:\n"
                           f"{result.get('error') or ''}\n{result.get('log') or ''}".rstrip())



def add_student(root: Path, student: str) -> None:
    """Enter ``student`` in the gradebook (before lessons are graded at once: each autograde
    would otherwise create the same student, and all but one would fail)."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SQLAlchemyError

    path = root / "gradebook.db"
    if not path.is_file():  # nbgrader would make an empty one, which knows no lesson
        raise FileNotFoundError(f"no gradebook at {path}: make the course with `course release`")
    try:
        with nbgrader_env(), Gradebook(f"sqlite:///{path}") as gb:
            gb.update_or_create_student(student)
    except SQLAlchemyError as exc:  # never nbgrader's advice to run `nbgrader db upgrade`
        raise ValueError(f"{path} is not a gradebook nbgrader can use "
                         f"({str(getattr(exc, 'orig', exc)).splitlines()[0]})") from None


def main(argv: list[str]) -> int:
    """``ROOT CELL_TIMEOUT ACTION ARG...``: one nbgrader action in a process of its own (exit 1
    and nbgrader's log on stderr when it fails)."""
    try:
        run(Path(argv[0]), *argv[2:], cell_timeout=float(argv[1]))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0
