"""What every lesson explorer shares: sliders -> pure recomputation -> FigureWidget.

An explorer subclass declares its sliders (``_make_sliders``), builds its
``FigureWidget`` once (``_make_figure``), and implements ``_compute(**params)``
(pure: returns a result object) and ``_draw(result)`` (writes into the existing
traces). ``update(**params)`` runs both, the drawing inside ``fig.batch_update()``
so the browser receives one message and redraws once. Slider callbacks round
float values first: keyboard steps produce values like 1.9999999999999998.
Not taught by a notebook: it is plumbing for the lesson apps.
"""

from __future__ import annotations

from typing import Any


def _widgets():
    import ipywidgets

    return ipywidgets


def _go():
    import plotly.graph_objects as go

    return go


class LessonExplorer:
    """Base class of the lesson apps (see the module docstring)."""

    #: decimals float slider values are rounded to in callbacks
    digits = 4
    title = ""

    def __init__(self, **params: Any) -> None:
        self.sliders: dict[str, Any] = self._make_sliders(params)
        self.fig = self._make_figure()
        self.readout = _widgets().HTML()
        self.result: Any = None
        self.params: dict[str, Any] = {}
        self._syncing = False
        for name, slider in self.sliders.items():
            slider.observe(self._on_slider, names="value")
        self.update(**{name: s.value for name, s in self.sliders.items()})

    # ------------------------------------------------------------ subclass API
    def _make_sliders(self, params: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

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
        merged = {**self.params, **{k: self.clean(k, v) for k, v in params.items()}}
        self.result = self._compute(**merged)
        self.params = merged
        with self.fig.batch_update():
            self._draw(self.result)
        self.readout.value = self._readout_html()
        # Keep the sliders in step when update() is called from code (the flag stops
        # the slider's own callback from recomputing a second time).
        self._syncing = True
        try:
            for name, value in merged.items():
                slider = self.sliders[name]
                if abs(float(slider.value) - float(value)) > 1e-9:
                    slider.value = value
        finally:
            self._syncing = False
        return self.result

    def _on_slider(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        owner = change["owner"]
        for name, slider in self.sliders.items():
            if slider is owner:
                self.update(**{name: change["new"]})
                return

    def _readout_html(self) -> str:
        parts = [f"<b>{k.replace('_', ' ')}</b>: {v}" for k, v in self.summary().items()
                 if not isinstance(v, (list, dict, tuple))]
        return "<div style='font-size:90%'>" + " &nbsp;·&nbsp; ".join(parts) + "</div>"

    @property
    def widget(self) -> Any:
        """The sliders, the figure and a live readout, ready to ``display``."""
        w = _widgets()
        controls = list(self.sliders.values())
        rows = [w.HBox(controls[i:i + 2]) for i in range(0, len(controls), 2)]
        return w.VBox([*rows, self.fig, self.readout])

    def print_summary(self) -> None:
        """Print ``summary()`` one ``name: value`` per line (what nbval compares)."""
        for key, value in self.summary().items():
            print(f"{key}: {value}")

    def _ipython_display_(self) -> None:  # pragma: no cover - needs a frontend
        from IPython.display import display

        display(self.widget)


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
