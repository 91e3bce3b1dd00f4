"""What a graded cell runs: the lesson's checker, re-imported by name and verified to be
memorykit's own, and its verdict read without trusting anything the notebook could patch.

A graded cell is ``graded("lesson01_checks.check_budget", answer)``. A student's answer cell runs
in the same kernel first, so it could redefine ``check_budget``, patch ``Verdict.assert_passed``
or replace ``lesson01_checks.check_budget``. Here the checker is looked up afresh in its module,
and that module, every memorykit module it imports and the ``Verdict`` class are compared with
their source files on disk: each function's and method's code, each name imported from
memorykit, each literal constant. Anything that differs raises ``TamperedChecker`` naming it,
so the cell fails and nbgrader scores it 0.

The limit (docs/LESSON_FORMAT.md): code in the same process can always reach deeper (rewrite
the files, patch builtins, importlib, numpy, IPython's error display or this module). This
stops redefining and patching the checker and the verdict; nbgrader restores the graded cells'
source, and the instructor guide says how to isolate grading.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import re
import site
import sys
import types
from pathlib import Path
from typing import Any

from memorykit.classroom.contracts.verdict import NotYet, Verdict

_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # .../memorykit
_CHECKER = re.compile(r"(lesson\d\d_checks)\.(check_\w+)")
# What IPython runs a cell's error through, up to the error output nbgrader reads.
_SHOWS_ERRORS = ("run_code", "showtraceback", "_showtraceback", "showsyntaxerror",
                 "get_exception_only")
_NO_CODE = compile("", "<none>", "exec")
_SOURCES: dict[Path, tuple[int, ast.Module, dict[str, types.CodeType]]] = {}


class TamperedChecker(NotYet):
    """A graded cell's checker or verdict is not memorykit's own (a ``NotYet``: nbgrader scores
    the cell 0 and shows the reason alone)."""


def graded(checker: str, /, *args: Any, **kwargs: Any) -> Verdict:
    """Run ``checker`` ("lessonNN_checks.check_x") on the answer, after verifying it and
    ``Verdict`` against memorykit's source; return the verdict when it passed, or raise
    ``NotYet`` with its text (``TamperedChecker`` when something was patched)."""
    found = _CHECKER.fullmatch(checker) if isinstance(checker, str) else None
    if found is None:
        raise ValueError(f"checker must name 'lessonNN_checks.check_...', got {checker!r}")
    module = importlib.import_module(f"memorykit.classroom.{found.group(1)}")
    verdict_module = importlib.import_module("memorykit.classroom.contracts.verdict")
    seen: set[str] = set()
    for trusted in (sys.modules[__name__], verdict_module, module):
        _verify_module(trusted, seen)
    _verify_dataclass(verdict_module.Verdict, verdict_module)
    _check_error_display()
    check = module.__dict__.get(found.group(2))
    if not isinstance(check, types.FunctionType):
        raise TamperedChecker(f"{checker} is not a function of memorykit's (got {check!r})")
    result = check(*args, **kwargs)
    if type(result) is not verdict_module.Verdict:
        raise TamperedChecker(f"{checker} returned {type(result).__name__}, not memorykit's Verdict")
    # The instance's own field, not a method or property the class might have grown.
    if object.__getattribute__(result, "__dict__").get("passed") is not True:
        raise NotYet(str(result))
    return result


def _check_error_display() -> None:
    """nbgrader scores a graded cell 0 when it shows an error or the kernel reports one: refuse
    a shell a notebook kept from doing either (a custom exception handler, its own
    ``run_code`` or ``showtraceback``), printing to stderr too, which nbgrader also scores 0."""
    get_ipython = getattr(sys.modules.get("IPython"), "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    if shell is None:
        return
    patched = [name for name in _SHOWS_ERRORS if not _from_disk(
        getattr(getattr(type(shell), name, None), "__code__", _NO_CODE)) or (
        # ipykernel sets its own bound method on the instance; anything else hides errors
        name in vars(shell) and getattr(vars(shell)[name], "__func__", None) is not getattr(
            type(shell), name))]
    if getattr(shell, "custom_exceptions", ()):
        patched.append("set_custom_exc")
    if patched:
        shell.custom_exceptions = ()
        problem = f"IPython's error display is not its own: {patched} patched"
        print(problem, file=sys.stderr)
        raise TamperedChecker(problem)


def _source(path: Path) -> tuple[ast.Module, dict[str, types.CodeType]]:
    """The parsed module and its functions' code objects by qualified name, as compiled from
    the file (cached by modification time: a recompiled file is as trusted as the file)."""
    stamp = path.stat().st_mtime_ns
    if path not in _SOURCES or _SOURCES[path][0] != stamp:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        codes: dict[str, types.CodeType] = {}
        pending = [compile(tree, str(path), "exec", dont_inherit=True)]
        while pending:
            for const in pending.pop().co_consts:
                if isinstance(const, types.CodeType):
                    codes.setdefault(const.co_qualname, const)
                    pending.append(const)
        _SOURCES[path] = (stamp, tree, codes)
    return _SOURCES[path][1], _SOURCES[path][2]


def _from_disk(code: types.CodeType) -> bool:
    """``code`` is what its own file, memorykit's or an installed library's, compiles to."""
    path = Path(code.co_filename).resolve()
    # where libraries are installed (a student's ``pip install --user`` too), not a notebook's /tmp
    installed = [Path(p).resolve() for p in (sys.prefix, sys.base_prefix, site.USER_SITE) if p]
    installed.append(_PACKAGE_ROOT)
    return (path.suffix == ".py" and path.is_file() and any(path.is_relative_to(p) for p in installed)
            and _source(path)[1].get(code.co_qualname) == code)


def _in_closure(value: Any, expected: types.CodeType | None, depth: int = 6) -> Any:
    """The function with code ``expected`` that a decorator's product (hypothesis' composite)
    holds in its closure, or None."""
    for cell in getattr(value, "__closure__", None) or () if depth else ():
        inner = cell.cell_contents
        if isinstance(inner, types.FunctionType):
            found = inner if inner.__code__ == expected else _in_closure(inner, expected, depth - 1)
            if found is not None:
                return found
    return None


def _verify_function(where: str, value: Any, expected: types.CodeType | None, home: dict,
                     decorated: bool = False) -> None:
    # A decorator's wrapper keeps the function it wraps as __wrapped__: the wrapper must be
    # functools' cache or compiled from its own file (memo's, contextlib's) too.
    while getattr(value, "__code__", None) != expected and hasattr(value, "__wrapped__"):
        if type(value) is not functools._lru_cache_wrapper:
            if not isinstance(value, types.FunctionType) or not _from_disk(value.__code__):
                break
        value = value.__wrapped__
    if decorated and getattr(value, "__code__", None) != expected:
        value = _in_closure(value, expected) or value
    if not isinstance(value, types.FunctionType) or value.__code__ != expected:
        raise TamperedChecker(f"{where} is not memorykit's own: redefined or patched (now "
                              f"{value!r}), or its file changed since the kernel started")
    if value.__globals__ is not home:
        raise TamperedChecker(f"{where} is not memorykit's own: it runs with other globals")


def _verify_module(module: types.ModuleType, seen: set[str]) -> None:
    """Every def, class method, memorykit import and literal constant of ``module`` is what its
    source file says; every memorykit module it imports (anywhere in the file) likewise."""
    name = getattr(module, "__name__", "?")
    if name in seen:
        return
    seen.add(name)
    origin = getattr(getattr(module, "__spec__", None), "origin", None)
    path = Path(str(origin)).resolve()
    if path.suffix != ".py" or not path.is_relative_to(_PACKAGE_ROOT):
        raise TamperedChecker(f"module {name} is not memorykit's own (loaded from {origin!r})")
    tree, codes = _source(path)
    space = module.__dict__
    # State the module keeps (``global`` in a function) is not a constant to compare.
    state = {n for g in ast.walk(tree) if isinstance(g, ast.Global) for n in g.names}
    bound = state | set(_module_level_names(tree))
    shadowing = sorted(set(space) & set(vars(builtins)) - bound - {"__builtins__"})
    if any(not n.startswith("__") for n in shadowing):  # a global found before the builtin
        raise TamperedChecker(f"{name} is not memorykit's own: {shadowing} added, hiding builtins")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _verify_function(f"{name}.{node.name}", space.get(node.name), codes.get(node.name), space,
                             bool(node.decorator_list))
        elif isinstance(node, ast.ClassDef):
            cls = space.get(node.name)
            if not isinstance(cls, type) or cls.__module__ != name:
                raise TamperedChecker(f"{name}.{node.name} is not memorykit's own (now {cls!r})")
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    member = cls.__dict__.get(item.name)
                    member = getattr(member, "__func__", getattr(member, "fget", member))
                    if type(member) is functools.cached_property:
                        member = member.func
                    _verify_function(f"{name}.{node.name}.{item.name}", member,
                                     codes.get(f"{node.name}.{item.name}"), space)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            try:
                literal = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError):
                continue  # not a literal: built at import, checked through what built it
            if isinstance(literal, (list, dict, set)):
                continue  # a registry filled at import
            for target in (t for t in targets if isinstance(t, ast.Name) and t.id not in state):
                live = space.get(target.id)
                if type(live) is not type(literal) or live != literal:
                    raise TamperedChecker(f"{name}.{target.id} is {live!r}, not memorykit's "
                                          f"{literal!r}")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (
                node.module or "").split(".")[0] == "memorykit":
            source = importlib.import_module(node.module)
            _verify_module(source, seen)
            for alias in node.names:
                original = getattr(source, alias.name, None)
                if isinstance(original, types.ModuleType):
                    if original.__name__.split(".")[0] == "memorykit":
                        _verify_module(original, seen)
                elif node in tree.body:
                    bound = alias.asname or alias.name
                    if space.get(bound) is not original:
                        raise TamperedChecker(f"{name}.{bound} is not memorykit's "
                                              f"{node.module}.{alias.name}: patched")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "memorykit":
                    _verify_module(importlib.import_module(alias.name), seen)


def _module_level_names(node: ast.AST) -> Any:
    """The names a module's own statements bind (not those inside its functions and classes)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield child.name
        elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            yield child.id
        elif isinstance(child, ast.alias):
            yield (child.asname or child.name).split(".")[0]
        elif not isinstance(child, ast.Lambda):
            yield from _module_level_names(child)


def _verify_dataclass(cls: type, module: types.ModuleType) -> None:
    """The methods ``@dataclass`` generated (``__init__``, ``__setattr__``, ...) have no source
    line to compare: compare the class with one built afresh from the module's file."""
    fresh: dict[str, Any] = {"__name__": module.__name__}
    tree, _ = _source(Path(str(module.__spec__.origin)))
    exec(compile(tree, module.__spec__.origin, "exec", dont_inherit=True), fresh)
    pristine = fresh[cls.__name__]
    if set(vars(cls)) != set(vars(pristine)):
        extra = sorted(set(vars(cls)) ^ set(vars(pristine)))
        raise TamperedChecker(f"{cls.__name__} is not memorykit's own: {extra} added or removed")
    for key, value in vars(pristine).items():
        if isinstance(value, types.FunctionType):
            _verify_function(f"{cls.__name__}.{key}", vars(cls)[key], value.__code__,
                             module.__dict__)
