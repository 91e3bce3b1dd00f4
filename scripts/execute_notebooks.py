"""Re-execute notebooks in place, exactly as CI checks them (``./run notebooks``).

    python scripts/execute_notebooks.py                      # every notebooks/*.ipynb
    python scripts/execute_notebooks.py notebooks/02_x.ipynb  # just these

Each notebook runs top to bottom in a fresh ``python3`` kernel of this interpreter's environment
with the working directory set to ``notebooks/`` (where nbval runs them too), with a timeout per
cell. Outputs and execution counts are kept (strict nbval compares only executed cells); the
saved widget state in ``metadata.widgets`` (~5 MB with a plotly FigureWidget) is stripped. The
kernels run with ``MEMORYKIT_STATIC_FIGURES=1``, so each explorer's output also carries a PNG of
its figure as first drawn (rendered by kaleido with the system Chromium): GitHub and nbviewer,
which run no kernel, show that picture where JupyterLab shows the live widget. A
notebook that raises is reported and left unchanged on disk; the exit status is the number of
failed notebooks (capped at 100).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbconvert.preprocessors import CellExecutionError, ExecutePreprocessor

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def strip_widget_state(nb: nbformat.NotebookNode) -> bool:
    """Drop ``metadata.widgets`` (saved widget state); return whether there was any."""
    return nb.metadata.pop("widgets", None) is not None


def execute(path: Path, timeout: int, kernel_name: str) -> tuple[bool, float, str]:
    """Execute one notebook in place; return (ok, seconds, message)."""
    nb = nbformat.read(path, as_version=4)
    ep = ExecutePreprocessor(timeout=timeout, kernel_name=kernel_name, allow_errors=False)
    t0 = time.monotonic()
    try:
        ep.preprocess(nb, {"metadata": {"path": str(NOTEBOOKS)}})
    except CellExecutionError as exc:
        lines = str(exc).strip().splitlines()
        return False, time.monotonic() - t0, "\n".join(lines[-15:])
    except Exception as exc:  # kernel died, timeout, ...
        return False, time.monotonic() - t0, f"{type(exc).__name__}: {exc}"
    strip_widget_state(nb)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return True, time.monotonic() - t0, ""


def main(argv: list[str] | None = None) -> int:
    # Read by memorykit.classroom.figure in the kernels this process starts (they inherit it).
    os.environ["MEMORYKIT_STATIC_FIGURES"] = "1"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="notebook paths (default: every notebooks/*.ipynb)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    parser.add_argument("--kernel", default="python3", help="kernel name (default python3)")
    args = parser.parse_args(argv)

    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    if not paths:
        print("no notebooks in notebooks/: nothing to execute")
        return 0
    missing = [p for p in paths if not p.is_file() or p.suffix != ".ipynb"]
    if missing:
        print("not notebook files: " + ", ".join(map(str, missing)), file=sys.stderr)
        return 2

    failed = 0
    for path in paths:
        print(f"executing {path} ...", flush=True)
        ok, seconds, message = execute(path.resolve(), args.timeout, args.kernel)
        size = path.stat().st_size
        if ok:
            print(f"  ok in {seconds:.1f} s, {size / 1000:.0f} kB written", flush=True)
        else:
            failed += 1
            print(f"  FAILED after {seconds:.1f} s (file left unchanged):\n{message}", flush=True)
    print(f"{len(paths) - failed}/{len(paths)} notebook(s) executed"
          + (f", {failed} failed" if failed else ""))
    return min(failed, 100)


if __name__ == "__main__":
    sys.exit(main())
