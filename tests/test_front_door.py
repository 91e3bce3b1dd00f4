"""The library's front door: ``import memorykit`` gives a few dozen documented names, lightly.

``memorykit.__all__`` is the advertised list (``memorykit._GROUPS`` groups it by concept and
names each one's module); every name resolves, has its own docstring whose first line is a
sentence, and comes from the library, never the classroom. Importing the package loads none
of its modules (nor numpy, openai, plotly...): each name loads its module on first use.
``docs/API.md`` is generated from the list by ``scripts/write_api_doc.py`` and must be current.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

import memorykit

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "write_api_doc.py"
API_DOC = ROOT / "docs" / "API.md"
REGENERATE = "python scripts/write_api_doc.py"
# What `import memorykit` must not load (docs/API.md promises no numpy, plotly or openai).
HEAVY = ("openai", "plotly", "ipywidgets", "anywidget", "nbgrader", "safetensors", "tokenizers",
         "numpy", "tiktoken", "memorykit.classroom")


def _load_script():
    spec = importlib.util.spec_from_file_location("write_api_doc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


writer = _load_script()
GROUPED = [(title, name, module) for title, names in memorykit._GROUPS for name, module in names]


def test_all_is_a_few_dozen_names_without_duplicates():
    names = memorykit.__all__
    assert 15 <= len(names) <= 45, f"{len(names)} names in memorykit.__all__ (15 to 45)"
    assert len(set(names)) == len(names), sorted({n for n in names if names.count(n) > 1})


def test_every_group_has_a_title_of_its_own_and_names():
    titles = [title for title, _ in memorykit._GROUPS]
    assert len(set(titles)) == len(titles) and all(names for _, names in memorykit._GROUPS)


@pytest.mark.parametrize("title,name,module", GROUPED, ids=[n for _, n, _ in GROUPED])
def test_every_name_resolves_from_its_module_and_is_documented(title, name, module):
    assert not module.startswith("memorykit.classroom"), f"{name} comes from the classroom"
    obj = getattr(importlib.import_module(module), name)
    assert getattr(memorykit, name) is obj
    namespace: dict = {}
    exec(f"from memorykit import {name}", namespace)
    assert namespace[name] is obj
    # the module named is the one that defines it (docs/API.md says where to read the code)
    assert getattr(obj, "__module__", module) == module, (name, obj.__module__, module)
    lines = (obj.__doc__ or "").strip().splitlines()  # a class's own: __doc__ is not inherited
    first = lines[0].strip() if lines else ""
    assert first, f"{module}.{name} has no docstring of its own"
    assert not first.startswith(f"{name}("), f"{name}'s docstring is the dataclass default"
    assert first.endswith(".") and len(first.split()) >= 4, (
        f"{module}.{name}: the docstring's first line is not a sentence: {first!r}")


def test_the_type_checking_imports_match_the_list():
    """Editors and type checkers read the ``if TYPE_CHECKING:`` imports; keep them equal."""
    tree = ast.parse(Path(memorykit.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    seen = {alias.asname or alias.name: node.module for node in block.body
            if isinstance(node, ast.ImportFrom) and node.module.startswith("memorykit")
            for alias in node.names}
    assert seen == {name: module for _, name, module in GROUPED}


def test_unknown_names_are_attribute_errors_and_dir_lists_the_front_door():
    with pytest.raises(AttributeError, match="no_such_name"):
        memorykit.no_such_name  # noqa: B018
    assert set(memorykit.__all__) <= set(dir(memorykit))
    # submodules stay reachable as before
    from memorykit import tokens

    assert tokens.Tokenizer is memorykit.Tokenizer


def test_import_memorykit_is_light():
    code = ("import json, sys; import memorykit; "
            "print(json.dumps(sorted(m for m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    loaded = set(json.loads(out.stdout))
    heavy = sorted(m for m in loaded
                   if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert not heavy, f"import memorykit loads {heavy}"
    own = sorted(m for m in loaded if m.startswith("memorykit"))
    assert own == ["memorykit"], f"import memorykit loads its modules eagerly: {own}"


def test_the_api_doc_is_current():
    expected = writer.render()
    actual = API_DOC.read_text(encoding="utf-8") if API_DOC.exists() else ""
    assert actual == expected, f"docs/API.md is stale: run `{REGENERATE}`"
    for _, name, module in GROUPED:
        assert f"| `{name}` |" in expected and f"`{module}`" in expected


def test_the_staleness_check_can_fail(tmp_path, capsys):
    assert writer.main(["--check"]) == 0
    # one name fewer (as if memorykit.__all__ had changed): the committed file is stale
    first_title, first_names = memorykit._GROUPS[0]
    changed = ((first_title, tuple(first_names[1:])), *memorykit._GROUPS[1:])
    assert writer.render(changed) != API_DOC.read_text(encoding="utf-8")
    assert writer.main(["--check"], groups=changed) == 1
    assert REGENERATE in capsys.readouterr().err
    # writing repairs a stale file, and the check then passes
    stale = tmp_path / "API.md"
    stale.write_text("# old\n", encoding="utf-8")
    assert writer.main(["--check", "--output", str(stale)]) == 1
    assert writer.main(["--output", str(stale)]) == 0
    assert writer.main(["--check", "--output", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == API_DOC.read_text(encoding="utf-8")


def test_the_check_exits_1_from_the_command_line(tmp_path):
    stale = tmp_path / "API.md"
    stale.write_text("# old\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(SCRIPT), "--check", "--output", str(stale)],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 1 and REGENERATE in result.stderr


def test_the_readme_points_at_the_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The library's front door", 1)[1].split("\n## ", 1)[0]
    assert "[docs/API.md](docs/API.md)" in section and REGENERATE in section
    imported = section.split("from memorykit import ", 1)[1].split("\n", 1)[0]
    assert {n.strip() for n in imported.split(",")} <= set(memorykit.__all__)
