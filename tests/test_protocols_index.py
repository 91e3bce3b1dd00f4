"""memorykit.protocols lists every Protocol the package defines, and each name is the class."""

import ast
from pathlib import Path

import memorykit.protocols as index

PACKAGE = Path(index.__file__).resolve().parent


def _protocols_defined() -> dict[str, str]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(
                    (isinstance(b, ast.Name) and b.id == "Protocol")
                    or (isinstance(b, ast.Attribute) and b.attr == "Protocol") for b in node.bases):
                module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
                found[node.name] = module
    return found


def test_every_protocol_is_listed_once_with_its_home():
    defined = _protocols_defined()
    assert len(defined) >= 13
    assert sorted(index.__all__) == sorted(defined)
    for name, module in defined.items():
        assert getattr(index, name).__module__ == module
        assert f"``{name}``" in index.__doc__ and f"``{module}``" in index.__doc__
