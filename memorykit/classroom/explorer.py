"""The one lesson explorer: sliders declared as data, a pure recomputation, a live figure, and
the student's own implementation drawn beside the library's.

An explorer subclass declares its sliders (``settings``, a tuple of ``Setting``), builds its
figure once (``_make_figure``: a ``go.Figure``, made live by ``figure.live_figure``), and
implements ``_compute(**params)`` (pure: returns a result object) and ``_draw(result)``
(writes into the existing traces; ``moved(*names)`` says whether a slider a panel depends on
changed, so a move redraws only the panels it changes).

An explorer that teaches a pattern the student rebuilds declares ``implementation`` (what the
student's code must be: a subclass of a library class, or a function with given parameters)
and accepts ``yours=`` (the student's class or function, or a dict of several by name): it
runs them under the same sliders as the library's and draws each as its own trace, named
``yours_name(name)`` (``"yours: LeastImportantBuffer"``).
``update(**params)`` runs both, the drawing inside ``fig.batch_update()`` so the
browser receives one message and redraws once; the figure is a
``_figure.LessonFigure``, whose edits never leave the browser's copy of a trace
half-updated (see ``_figure``). Slider callbacks round
float values first: keyboard steps produce values like 1.9999999999999998.
Not taught by a notebook: it is plumbing for the lesson apps.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
import inspect
from collections.abc import Callable
from typing import Any

from memorykit._validate import require_choice, require_real
from memorykit.classroom.figure import live_figure, publish, static_figures_enabled, static_png
from memorykit.classroom.memo import memo
from memorykit.classroom.verdict import require_function
from memorykit.embeddings import Embedder


EMBEDDERS = {"minilm": "a sentence embedder: meaning, not only shared words",
             "lexical": "the lexical hashing baseline: word overlap, not meaning"}
"""The long-term lessons' embedders (09, 10) and what each measures; the first is the default:
all-MiniLM-L6-v2, the embedder seed 003 chose its 0.65 threshold for."""


@memo(maxsize=None)
def lesson_embedder(kind: str = "minilm") -> Embedder:
    """One shared instance per kind of ``EMBEDDERS``, so every lesson embeds a text once per
    process (MiniLM also keeps its vectors on disk: ``minilm_embedder``)."""
    require_choice("embedder", kind, tuple(EMBEDDERS))
    if kind == "minilm":
        from memorykit.longterm.minilm import minilm_embedder

        return minilm_embedder()
    from memorykit.embeddings import LexicalHashingEmbedder

    return LexicalHashingEmbedder()


def _widgets():
    import ipywidgets

    return ipywidgets


def _go():
    import plotly.graph_objects as go

    return go


@dataclass(frozen=True)
class Setting:
    """One slider of an explorer, declared once: the explorer's sliders, its defaults and
    the ranges a sweep offers are all read from its ``settings``."""

    name: str
    """The keyword the explorer's computation takes."""
    label: str
    """What the slider calls it."""
    default: float
    """The value the explorer starts at (the seed's, where the seed gives one)."""
    low: float
    """Smallest value the slider offers (the library decides what is valid)."""
    high: float
    """Largest value the slider offers."""
    step: float
    """Slider step; whole-number ranges and steps make an integer slider."""
    fmt: str | None = None
    """Readout format of a float slider (default ``.2f`` below a step of 1, else ``.1f``)."""


def defaults(settings: tuple[Setting, ...]) -> dict[str, Any]:
    """``{name: default}`` of declared settings (integers stay integers)."""
    return {s.name: (int(s.default) if _whole(s) else s.default) for s in settings}


def _whole(setting: Any) -> bool:
    return all(float(v).is_integer() for v in (setting.low, setting.high, setting.step))


YOURS_PREFIX = "yours: "


def yours_name(name: str) -> str:
    """The trace name of the student's implementation ``name`` (the browser test looks for it)."""
    return f"{YOURS_PREFIX}{name}"


def readout_label(key: Any) -> str:
    """A readout name as the student reads it: ``memory_tokens`` as "memory tokens", but the
    student's own code under the name the legend and the lesson use (``yours: select_recalled``)."""
    key = str(key)
    return key if key.startswith(YOURS_PREFIX) else key.replace("_", " ")


@dataclass(frozen=True)
class Implementation:
    """What a student's code must be to run in an explorer beside the library's."""

    what: str
    """How the lesson names it, for errors ("a MessageBuffer subclass")."""
    base: type | None = None
    """The library class the student's class must subclass (None: a function is expected)."""
    parameters: tuple[str, ...] = ()
    """A function's parameters, by name, in order (what the exercise's scaffold declares)."""
    keywords: tuple[str, ...] = ()
    """A function's keyword-only parameters."""
    methods: tuple[str, ...] = ()
    """Methods a class must have (for a protocol ``issubclass`` cannot check: base=object)."""

    def check(self, name: str, value: Any) -> Any:
        """``value`` if it is such an implementation, else a TypeError naming it."""
        if self.base is None:
            require_function(name, value, self.parameters, self.keywords)
        elif not (isinstance(value, type) and issubclass(value, self.base)):
            raise TypeError(f"{name} must be {self.what}, got {value!r}")
        missing = [m for m in self.methods if not callable(getattr(value, m, None))]
        if missing:
            raise TypeError(f"{name} must be {self.what}; {value.__name__} has no "
                            f"{', '.join(missing)} method")
        return value


def _implementations(spec: Implementation | None, yours: Any) -> dict[str, Any]:
    """``yours`` (None, one implementation, or a dict of them by name) as a checked dict."""
    if yours is None:
        return {}
    if spec is None:
        raise TypeError(f"this explorer draws no implementation of yours, got yours={yours!r}")
    if not isinstance(yours, dict):
        yours = {getattr(yours, "__name__", type(yours).__name__): yours}
    if not yours:
        raise ValueError("yours is an empty dict: pass a class or function, or leave it out")
    out = {}
    for name, value in yours.items():
        if not isinstance(name, str) or not name.strip():
            raise TypeError(f"the names in yours must be non-empty strings, got {name!r}")
        out[name] = spec.check(f"yours[{name!r}]", value)
    return out


class LessonExplorer:
    """Base class of the lesson apps (see the module docstring)."""

    #: decimals float slider values are rounded to in callbacks
    digits = 4
    title = ""
    #: the sliders, declared once (an explorer may instead override ``_make_sliders``)
    settings: tuple[Setting, ...] = ()
    #: what a student's implementation must be to be drawn here (None: the explorer takes none)
    implementation: Implementation | None = None

    def __init__(self, yours: Any = None, **params: Any) -> None:
        self.yours: dict[str, Any] = _implementations(self.implementation, yours)
        """The student's implementations drawn beside the library's, by name."""
        self._moved: set[str] | None = None
        self.sliders: dict[str, Any] = self._make_sliders(params)
        self.fig = live_figure(self._make_figure())
        self.readout = _widgets().HTML()
        self.result: Any = None
        self.params: dict[str, Any] = {}
        self._box: Any = None
        self._traces: dict[str, Any] | None = None
        self._static_png: bytes | None = None
        self._syncing = False
        for name, slider in self.sliders.items():
            slider.observe(self._on_slider, names="value")
        self.update(**{name: s.value for name, s in self.sliders.items()})

    # ------------------------------------------------------------ subclass API
    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        """One slider per declared setting, at ``params``' value or the setting's default."""
        if not self.settings:
            raise NotImplementedError(f"{type(self).__name__} declares no settings")
        names = [s.name for s in self.settings]
        unknown = set(params) - set(names)
        if unknown:
            raise TypeError(f"unknown setting(s) {', '.join(sorted(unknown))}; "
                            f"expected some of {', '.join(names)}")
        start = {**defaults(self.settings), **params}
        for s in self.settings:
            # a slider holds numbers only; what values are valid the computation decides
            require_real(s.name, start[s.name])
        return {s.name: setting_slider(s, start[s.name]) for s in self.settings}

    def _make_figure(self) -> Any:
        raise NotImplementedError

    def _compute(self, **params: Any) -> Any:
        raise NotImplementedError

    def _draw(self, result: Any) -> None:
        raise NotImplementedError

    def summary(self) -> dict[str, Any]:
        """Rounded numbers describing what the figure shows now."""
        raise NotImplementedError

    # ------------------------------------------------------------------ public
    def clean(self, name: str, value: Any) -> Any:
        """A slider value as the computation should see it (floats rounded)."""
        if isinstance(value, float):
            return round(value, self.digits)
        return value

    def update(self, **params: Any) -> Any:
        """Recompute with ``params`` (missing ones keep their current values) and redraw."""
        unknown = set(params) - set(self.sliders)
        if unknown:
            raise TypeError(
                f"unknown parameter(s) {', '.join(sorted(unknown))}; "
                f"expected some of {', '.join(self.sliders)}"
            )
        merged = self._merge({k: self.clean(k, v) for k, v in params.items()})
        self.result = self._compute(**merged)
        self._moved = None if not self.params else \
            {k for k, v in merged.items() if self.params.get(k) != v}
        self.params = merged
        with self.fig.batch_update():
            self._draw(self.result)
        self.readout.value = self._readout_html()
        # Keep the sliders in step when update() is called from code (the flag stops
        # the slider's own callback from recomputing a second time).
        self._syncing = True
        try:
            self._sync_sliders(merged)
        finally:
            self._syncing = False
        return self.result

    def _merge(self, params: dict[str, Any]) -> dict[str, Any]:
        """The full setting after a move (an explorer whose sliders depend on each other
        overrides this, e.g. lesson 12 resets its parameter sliders for a new policy)."""
        return {**self.params, **params}

    def _sync_sliders(self, params: dict[str, Any]) -> None:
        """Set every slider to ``params`` (floats compared to 1e-9: rounding is not a move)."""
        for name, value in params.items():
            slider = self.sliders[name]
            if isinstance(value, (int, float)) and isinstance(slider.value, (int, float)):
                if abs(float(slider.value) - float(value)) > 1e-9:
                    slider.value = value
            elif slider.value != value:
                slider.value = value

    def _on_slider(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        owner = change["owner"]
        for name, slider in self.sliders.items():
            if slider is owner:
                self.update(**{name: change["new"]})
                return

    def moved(self, *names: str) -> bool:
        """Whether this draw must redraw what depends on the settings ``names``: always on the
        first draw, else only when one of them changed. A panel that depends on none of the
        moved sliders is left as it is: its traces take no part in the edit sent to the browser
        (a trace that is edited carries every property the same batch sets on any trace, see
        ``figure.LessonFigure``)."""
        return self._moved is None or not self._moved.isdisjoint(names)

    def readout_numbers(self) -> dict[str, Any]:
        """The numbers shown under the figure (default: ``summary()``; an explorer whose
        summary lists whole series, which the figure already draws, shows fewer)."""
        return self.summary()

    def _readout_html(self) -> str:
        """``readout_numbers()`` as a small aligned table of name / value pairs (``readout_table``)."""
        items = [(readout_label(k), v) for k, v in self.readout_numbers().items()
                 if not isinstance(v, (list, dict, tuple))]
        return readout_table(items)

    def extra_widgets(self) -> list[Any]:
        """Widgets shown below the readout (none by default; lesson 08 shows its prompt)."""
        return []

    @property
    def widget(self) -> Any:
        """The sliders, the figure and a live readout in one box (built once), ready to ``display``."""
        if self._box is None:
            w = _widgets()
            controls = list(self.sliders.values())
            rows = [w.HBox(controls[i:i + 2]) for i in range(0, len(controls), 2)]
            self._box = w.VBox([*rows, self.fig, self.readout, *self.extra_widgets()],
                               layout=w.Layout(width="100%"))
        publish(self.fig)  # views of the box draw the figure as the kernel holds it now
        return self._box

    def trace(self, name: str) -> Any:
        """The figure's trace called ``name`` (explorers address traces by name, not position)."""
        if self._traces is None:
            names = [t.name for t in self.fig.data]
            self._traces = {n: t for n, t in zip(names, self.fig.data) if names.count(n) == 1}
        found = self._traces.get(name)
        if found is None:
            raise KeyError(f"the figure has no single trace named {name!r}; names: "
                           f"{', '.join(str(t.name) for t in self.fig.data)}")
        return found

    def print_summary(self) -> None:
        """Print ``summary()`` one ``name: value`` per line (what nbval compares)."""
        for key, value in self.summary().items():
            print(f"{key}: {value}")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The live widget; a PNG of the figure when static figures are on (see ``_figure``).

        JupyterLab draws the widget view; GitHub and nbviewer, which run no kernel, show the
        PNG (when ``MEMORYKIT_STATIC_FIGURES=1``, as ``./run notebooks`` sets) instead of the
        widget's placeholder text.
        """
        bundle = dict(self.widget._repr_mimebundle_(include=include, exclude=exclude) or {})
        bundle["text/plain"] = (f"{type(self).__name__}: {self.title or 'interactive figure'} "
                                "(run the notebook to move its sliders)")
        if static_figures_enabled():
            if self._static_png is None:
                self._static_png = static_png(self.fig)
            bundle["image/png"] = base64.b64encode(self._static_png).decode("ascii")
        return bundle


def readout_table(items: list[tuple[str, Any]]) -> str:
    """Name / value pairs as a small aligned table that wraps to the output's width.

    A CSS grid of equal columns (at least 250 px each): names left, values right-aligned in
    tabular figures, so a column of numbers lines up whatever the notebook's width.
    """
    def value_style(value: str) -> str:
        # short values never break ("59/114" on one line); long ones wrap at any character
        return ("white-space:nowrap" if len(value) <= 28
                else "overflow-wrap:anywhere;min-width:0;flex:1 1 60%")

    cells = "".join(
        "<div style='display:flex;justify-content:space-between;gap:12px;padding:1px 0;"
        "border-bottom:1px solid #eee'><span style='color:#555'>"
        f"{html.escape(name)}</span><b style='font-variant-numeric:tabular-nums;"
        f"text-align:right;{value_style(str(value))}'>{html.escape(str(value))}</b></div>"
        for name, value in items)
    return ("<div class='memorykit-readout' style='display:grid;grid-template-columns:"
            "repeat(auto-fill,minmax(290px,1fr));column-gap:28px;font-size:12px;line-height:1.35;"
            "margin:4px 8px 0 8px'>" + cells + "</div>")


def setting_slider(setting: Any, value: Any) -> Any:
    """A slider for a declared setting (``name``, ``label``, ``low``, ``high``, ``step``):
    an integer slider when the range and step are whole numbers, a float slider otherwise."""
    if _whole(setting):
        return int_slider(setting.label, int(value), int(setting.low), int(setting.high),
                          int(setting.step))
    fmt = getattr(setting, "fmt", None) or (".2f" if setting.step < 1 else ".1f")
    return float_slider(setting.label, float(value), float(setting.low), float(setting.high),
                        float(setting.step), fmt)


def float_slider(description: str, value: float, lo: float, hi: float, step: float,
                 fmt: str = ".2f") -> Any:
    w = _widgets()
    return w.FloatSlider(
        value=value, min=lo, max=hi, step=step, description=description,
        continuous_update=False, readout_format=fmt, style={"description_width": "initial"},
        layout=w.Layout(width="420px"),
    )


def int_slider(description: str, value: int, lo: int, hi: int, step: int) -> Any:
    w = _widgets()
    return w.IntSlider(
        value=value, min=lo, max=hi, step=step, description=description,
        continuous_update=False, style={"description_width": "initial"},
        layout=w.Layout(width="420px"),
    )


class ShownCode:
    """The source of a library function or class, shown in a lesson as the mechanism it teaches."""

    max_lines = 30

    def __init__(self, obj: Any) -> None:
        target = inspect.unwrap(obj)
        module = getattr(target, "__module__", "") or ""
        if not module.startswith("memorykit.") or module.startswith("memorykit.classroom"):
            raise ValueError(f"show_code shows the library's own code (memorykit, not the "
                             f"classroom), got {obj!r} from {module or 'nowhere'}")
        self.source = inspect.cleandoc("\n" + inspect.getsource(target)).rstrip()
        self.name = f"{module}.{target.__qualname__}"
        n = self.source.count("\n") + 1
        if n > self.max_lines:
            raise ValueError(f"{self.name} is {n} lines; show_code shows at most "
                             f"{self.max_lines} (show the method that decides, not the class)")

    def __repr__(self) -> str:
        return f"# {self.name}\n{self.source}"

    def _repr_markdown_(self) -> str:
        return f"`{self.name}`\n```python\n{self.source}\n```"


def show_code(obj: Callable[..., Any] | type) -> ShownCode:
    """The library's own code for ``obj`` (at most 30 lines), displayed as the cell's result:
    the decision a lesson teaches, read before its explorer draws the results."""
    return ShownCode(obj)
