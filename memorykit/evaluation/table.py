"""A tidy table without pandas: a list of flat dict rows, with helpers to look at it.

Every evaluation result in ``memorykit.evaluation`` is one of these, so a
notebook can hand ``table.to_records()`` to ``pandas.DataFrame`` or plotly
directly, and a terminal can print ``table.to_markdown()``.
Taught in ``notebooks/12_parameter_tuning.ipynb``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from memorykit._validate import require_texts

__all__ = ["Table"]


class Table:
    """Rows (dicts with the same kind of keys), in order; columns in order of first appearance."""

    def __init__(self, rows: Iterable[Mapping[str, Any]] = (), notes: Iterable[str] = ()) -> None:
        self.notes: tuple[str, ...] = tuple(require_texts("notes", notes))
        """What a reader must know to read the numbers (their units, policies that coincide);
        printed under the table."""
        self._rows: list[dict[str, Any]] = []
        for i, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise TypeError(f"rows[{i}] must be a mapping, got {row!r}")
            self._rows.append(dict(row))

    @property
    def columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self._rows:
            for key in row:
                seen.setdefault(key, None)
        return list(seen)

    def to_records(self) -> list[dict[str, Any]]:
        """A copy of the rows, ready for ``pandas.DataFrame(...)`` or a plot."""
        return [dict(r) for r in self._rows]

    def column(self, name: str) -> list[Any]:
        if name not in self.columns:
            raise KeyError(f"column {name!r} is not one of {self.columns}")
        return [r.get(name) for r in self._rows]

    def where(self, **equal: Any) -> Table:
        """Rows whose columns equal the given values."""
        return Table((r for r in self._rows if all(r.get(k) == v for k, v in equal.items())),
                     self.notes)

    def sort(self, key: str, reverse: bool = False) -> Table:
        return Table(sorted(self._rows, key=lambda r: (r.get(key) is None, r.get(key)),
                            reverse=reverse), self.notes)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.to_records())

    def __len__(self) -> int:
        return len(self._rows)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return dict(self._rows[index])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Table) and other._rows == self._rows and other.notes == self.notes

    def to_markdown(self, columns: list[str] | None = None, digits: int = 3) -> str:
        cols = self.columns if columns is None else columns

        def fmt(v: Any) -> str:
            if isinstance(v, float):
                return f"{v:.{digits}f}"
            if isinstance(v, Mapping):
                return ", ".join(f"{k}={fmt(x)}" for k, x in v.items())
            if isinstance(v, (tuple, list)):  # an interval: [low, high]
                return "[" + ", ".join(fmt(x) for x in v) + "]"
            return "" if v is None else str(v)

        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(fmt(r.get(c)) for c in cols) + " |" for r in self._rows]
        if self.notes:
            lines += [""] + [f"Note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Table({len(self)} rows: {', '.join(self.columns)})"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()
