import pytest

from memorykit.classroom.explorer import LessonExplorer, Setting, defaults
from memorykit.classroom.tables import print_rows


def test_print_rows_aligns_columns(capsys):
    print_rows([{"name": "a", "n": 1}, {"name": "bbb", "n": 100}])
    assert capsys.readouterr().out.splitlines() == ["name    n", "   a    1", " bbb  100"]
    print_rows([{"name": "a", "n": 1}, {"name": "bbb", "n": 100}], align="left")
    assert capsys.readouterr().out.splitlines() == ["name  n  ", "a     1  ", "bbb   100"]


@pytest.mark.parametrize("rows, align, message", [
    ([], "right", "rows must hold at least one row"),
    ([{"a": 1}], "centre", "align must be 'right' or 'left', got 'centre'"),
])
def test_print_rows_rejects_nonsense(rows, align, message):
    with pytest.raises(ValueError, match=message):
        print_rows(rows, align=align)


class _Declared(LessonExplorer):
    settings = (Setting("budget", "budget", 2000, 500, 4000, 100),
                Setting("threshold", "threshold", 0.8, 0.5, 1.0, 0.05))

    def _make_figure(self):
        import plotly.graph_objects as go

        return go.Figure([go.Scatter(x=[0], y=[0], name="line")])

    def _compute(self, **params):
        return params

    def _draw(self, result):
        self.trace("line").y = [result["budget"] * result["threshold"]]

    def summary(self):
        return dict(self.params)


def test_settings_declared_once_make_the_sliders_and_defaults():
    assert defaults(_Declared.settings) == {"budget": 2000, "threshold": 0.8}
    ex = _Declared(threshold=0.6)
    assert type(ex.sliders["budget"].value) is int and ex.sliders["budget"].max == 4000
    assert ex.sliders["threshold"].value == pytest.approx(0.6)
    assert ex.params == {"budget": 2000, "threshold": 0.6}
    assert list(ex.trace("line").y) == [pytest.approx(1200.0)]
    with pytest.raises(TypeError, match="unknown setting.*budgte"):
        _Declared(budgte=1)
    for bad in ("high", float("nan"), True):
        with pytest.raises((TypeError, ValueError), match="threshold"):
            _Declared(threshold=bad)


def test_readout_labels_keep_the_students_names_as_the_legend_writes_them():
    from memorykit.classroom.explorer import readout_label, yours_name

    assert readout_label("memory_tokens") == "memory tokens"
    assert readout_label(yours_name("select_recalled")) == "yours: select_recalled"
