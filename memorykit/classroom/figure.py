"""The live plotly figure of a lesson explorer: drawn completely in every view, notebook-wide.

Two faults of plotly's ``FigureWidget`` (plotly 7.1, anywidget 0.11, JupyterLab 4) are fixed
here, once, for every explorer (``LessonExplorer`` calls these; nothing else should):

* **Half-updated traces.** A ``FigureWidget`` lives twice in the browser: in its views, which
  apply each edit as a ``Plotly.update`` delta, and in the model's stored ``_widget_data`` /
  ``_widget_layout``, from which every view created later is drawn. plotly re-sends the stored
  state only from ``FigureWidget._repr_mimebundle_``, which never runs for a figure shown inside
  a container (an explorer's ``VBox``). Meanwhile plotly's frontend model patches its stored copy
  with the raw edit message, in which ``"_undefined_"`` (Python's ``Undefined``: "this trace
  keeps its value", sent for every trace that did not set a property another trace of the same
  batch set) is written literally and later read back as ``undefined``. A view created after an
  edit that set ``x`` on one trace and only ``y`` on another therefore drew the second trace
  without ``x``: lesson 04's invisible heat map and its bars labelled 0 and 1.
  ``LessonFigure`` fills those slots with the trace's current value, so no edit leaves the
  stored copy half-updated, and answers a full-state request (a page reload) with the figure
  as it is now; ``publish`` re-sends the whole state when a container is displayed, as
  ``_repr_mimebundle_`` does for a figure on its own.
* **700-pixel figures.** anywidget renders the view before the notebook attaches it to the
  page, so plotly.js measures a detached element and falls back to its 700 px default width.
  ``live_figure`` asks every new view to autosize again a kernel round trip later (it is in
  the page by then) and turns on plotly.js's ``responsive`` resizing for window resizes.

Both fixes stand on plotly's private side: the private names used here (which function uses
each, what it is for) are listed in ``tests/test_lesson_figure.py`` (``PLOTLY_HOOKS``), which
fails, naming the function to re-check, on a plotly or ipywidgets without one; ``pyproject.toml``
bounds plotly, ipywidgets and anywidget to the minor versions the browser test
(``tests/browser/test_notebooks_in_browser.py``) passed on.

Also here: ``typed_spec`` (an array as plotly's base64 typed-array spec, so a heat map's
``z`` crosses to the browser without becoming nested JSON lists) and ``static_png`` (a picture of
the figure for readers without a kernel, rendered by kaleido with the system Chromium).
Not taught by a notebook: it is plumbing for the lesson apps.
"""

from __future__ import annotations

import base64
import copy
import os
from typing import Any

STATIC_FIGURES_ENV = "MEMORYKIT_STATIC_FIGURES"
"""When set to ``1``, an explorer's display carries a PNG of its initial figure (``./run
notebooks`` sets it, so committed notebooks show a picture on GitHub and nbviewer)."""


def _go():
    import plotly.graph_objects as go

    return go


def publish(fig: Any) -> None:
    """Make the state new views of ``fig`` start from equal to the kernel's figure.

    What plotly's ``FigureWidget._repr_mimebundle_`` does before a figure is shown on its own;
    a figure inside a container needs it from whoever displays the container.
    """
    fig._widget_data = copy.deepcopy(fig._data)
    fig._widget_layout = copy.deepcopy(fig._layout_obj._props)


def _lesson_figure_class() -> type:
    go = _go()
    from plotly.basedatatypes import Undefined

    class LessonFigure(go.FigureWidget):
        """A ``FigureWidget`` whose edits never carry plotly's "keep this value" placeholder.

        ``batch_update`` sends one ``Plotly.update`` with a value per trace for every property
        any trace set; plotly fills the other slots with ``Undefined`` (see the module
        docstring for what that does to views created later). Here each such slot carries
        the trace's current value instead (``None``, "unset", when it has none), so the
        browser's stored copy of the figure stays complete after every edit. A request for
        the whole state (a page reload) is answered with the figure as it is now.
        """

        def _filled(self, restyle_data: Any, trace_indexes: Any) -> Any:
            indexes = _trace_indexes(self, trace_indexes)
            filled = {}
            for prop, values in (restyle_data or {}).items():
                if not isinstance(values, list) or not any(v is Undefined for v in values):
                    filled[prop] = values
                    continue
                filled[prop] = [
                    _current_value(self.data[indexes[slot % len(indexes)]], prop)
                    if v is Undefined else v for slot, v in enumerate(values)]
            return filled

        # The two messages that carry trace edits to the browser (plotly has already applied
        # the edit to the kernel's figure, so a trace's current value is its value).
        def _send_update_msg(self, restyle_data, relayout_data, trace_indexes=None,
                             source_view_id=None):
            super()._send_update_msg(self._filled(restyle_data, trace_indexes), relayout_data,
                                     trace_indexes, source_view_id)

        def _send_restyle_msg(self, restyle_data, trace_indexes=None, source_view_id=None):
            super()._send_restyle_msg(self._filled(restyle_data, trace_indexes), trace_indexes,
                                      source_view_id)

        def get_state(self, key=None, drop_defaults=False):
            # (the comm opens during __init__, before the figure has any data)
            if key is None and getattr(self, "_layout_obj", None) is not None:
                publish(self)
            return super().get_state(key=key, drop_defaults=drop_defaults)

    LessonFigure.__qualname__ = "LessonFigure"
    return LessonFigure


def _trace_indexes(fig: Any, trace_indexes: Any) -> list[int]:
    # None (every trace), one index or a sequence, as plotly passes them to _send_*_msg
    if trace_indexes is None:
        return list(range(len(fig.data)))
    if not isinstance(trace_indexes, (list, tuple)):
        return [trace_indexes]
    return list(trace_indexes)


def _current_value(trace: Any, prop: str) -> Any:
    # A property this trace type lacks (z on a scatter): sending "unset" is a no-op. Whether a
    # type has a property is asked once per (type, property): a failed lookup makes plotly
    # build a did-you-mean message (~0.2 ms), and asking every time costs 3-30 us per edit.
    key = (type(trace), prop)
    has = _HAS_PROPERTY.get(key)
    if has is None:
        has = _HAS_PROPERTY[key] = prop in trace
    return trace[prop] if has else None


_HAS_PROPERTY: dict[tuple[type, str], bool] = {}
"""(trace type, property path) -> whether the type has it (a finite set: plotly's schema)."""


_LESSON_FIGURE: type | None = None


def lesson_figure_class() -> type:
    """``LessonFigure``, built on first use (plotly is imported lazily)."""
    global _LESSON_FIGURE
    if _LESSON_FIGURE is None:
        _LESSON_FIGURE = _lesson_figure_class()
    return _LESSON_FIGURE


class _ViewSizer:
    """Sends ``relayout(autosize=True)`` whenever a new view of a figure appears.

    A new view announces itself (``_view_count`` grows) as it is created, draws at once, and
    is put in the page right after; the relayout reaches it a kernel round trip later, when it
    can measure the notebook's width. (plotly's own report back from a view,
    ``_js2py_layoutDelta``, never reaches the kernel under anywidget, so it cannot be the cue.)
    """

    def __init__(self, fig: Any) -> None:
        self.fig = fig
        fig.observe(self._on_view_count, names="_view_count")

    def _on_view_count(self, change: dict[str, Any]) -> None:
        if (change["new"] or 0) > (change["old"] or 0):
            # the message itself: plotly_relayout sends nothing when autosize is already True
            self.fig._send_relayout_msg({"autosize": True})


def live_figure(figure: Any) -> Any:
    """A ``LessonFigure`` of ``figure`` that every view draws completely at the notebook's width."""
    fig = lesson_figure_class()(figure)
    if fig.layout.width is None:
        fig.layout.autosize = True
    fig._config = {**(fig._config or {}), "responsive": True, "displaylogo": False}
    fig._memorykit_sizer = _ViewSizer(fig)
    publish(fig)
    return fig


def legend_below(**extra: Any) -> dict[str, Any]:
    """A horizontal legend at the bottom of the figure, under the x-axis title.

    Anchored to the figure's container, not its plot area: plotly grows the bottom margin to
    fit it, so it can cover neither an axis title nor a plot, whatever the figure's width.
    """
    return {"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0,
            **extra}


def heat_grid(values: Any, mask: Any | None = None, decimals: int = 4) -> Any:
    """A heat map's 2-D ``z`` for a live figure: rounded floats, ``None`` where empty.

    Why not a typed-array spec: plotly's widget compares every trace plotly.js drew with the
    data it was sent after each update, and a decoded spec never equals the spec, so the
    browser sent the whole grid back to the kernel, once per row's buffer (9.75 MB for lesson
    07's two 45 x 600 grids, ~80 ms per slider move). Nested lists compare equal. ``None``
    rather than NaN: NaN is not JSON, and the kernel's fallback cleaner walks every value in
    Python (~60 ms for the same grids); ``None`` travels as ``null`` and plotly.js draws a gap.
    """
    import numpy as np

    grid = np.round(np.asarray(values, dtype=float), decimals)
    if grid.ndim != 2:
        raise ValueError(f"heat_grid needs a 2-D array, got shape {grid.shape}")
    empty = ~np.isfinite(grid)
    if mask is not None:
        empty |= ~np.asarray(mask, dtype=bool)
    out = grid.astype(object)
    out[empty] = None
    return out


def typed_spec(values: Any) -> dict[str, str]:
    """A 1-D or 2-D array as plotly's typed-array spec (float32, NaN kept, base64 ``bdata``).

    plotly sends a 2-D numpy array to the browser as nested JSON lists (NaN as the string
    ``"nan"``), which costs ~100 ms to encode for a 45 x 600 grid; this spec crosses as one
    base64 string that plotly.js decodes into a typed array or matrix.
    """
    import numpy as np

    arr = np.ascontiguousarray(values, dtype="<f4")
    if arr.ndim not in (1, 2):
        raise ValueError(f"typed_spec needs a 1-D or 2-D array, got shape {arr.shape}")
    return {"dtype": "f4", "bdata": base64.b64encode(arr.tobytes()).decode("ascii"),
            "shape": ",".join(str(n) for n in arr.shape)}


def static_figures_enabled() -> bool:
    return os.environ.get(STATIC_FIGURES_ENV, "") == "1"


def static_png(fig: Any, width: int = 1000) -> bytes:
    """The figure as a PNG (kaleido driving the system Chromium; nothing is downloaded)."""
    static = _go().Figure(fig.to_dict())
    height = int(static.layout.height or 450)
    return static.to_image(format="png", width=width, height=height, scale=1)
