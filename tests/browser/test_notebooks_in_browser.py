"""Every notebook, opened in a real JupyterLab in headless Chromium, runs and reacts to a slider.

For each ``notebooks/*.ipynb`` (one test each, named after the notebook): open it, clear its
stored outputs, Run ▸ Run All Cells, wait until every code cell shows ``[n]``, and check that

* no cell raised (error outputs in the notebook model, tracebacks in the page, widgets that
  failed to render);
* at least one plotly figure (``.js-plotly-plot``) was drawn;
* at least one ipywidgets slider exists, and pressing ArrowRight (or ArrowLeft at the end of its
  range) on a slider handle changes the data (x/y/z/values/text arrays) of a plotly figure on
  the page. A notebook whose metadata says ``{"memorykit": {"interactive": false}}`` (the
  index) is exempt from the slider and plot checks.

The notebook file on disk is never written (autosave is off; its hash is checked afterwards).
Chromium is Debian's ``/usr/bin/chromium`` (``./run test`` installs it); without it the test
skips, except under ``CI=true`` where it fails. ``MEMORYKIT_BROWSER_NOTEBOOKS`` (paths or
directories separated by ``os.pathsep``) points the test at other notebooks, e.g. a throwaway
one while developing. A screenshot of every failure goes to ``.ci/artifacts/browser/``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
ON_CI = os.environ.get("CI", "").lower() == "true"
ARTIFACTS = ROOT / ".ci" / "artifacts" / "browser"

LOAD_TIMEOUT_S = 45      # page + notebook + kernel ready
RUN_TIMEOUT_S = float(os.environ.get("MEMORYKIT_BROWSER_RUN_TIMEOUT", "90"))  # Run All Cells
SLIDER_TIMEOUT_S = 8     # per slider: figure data must change within this
MAX_SLIDERS = 4          # sliders tried per notebook before giving up


def _notebooks() -> list[Path]:
    override = os.environ.get("MEMORYKIT_BROWSER_NOTEBOOKS")
    if not override:
        return sorted((ROOT / "notebooks").glob("*.ipynb"))
    found: list[Path] = []
    for part in filter(None, override.split(os.pathsep)):
        p = Path(part).resolve()
        found.extend(sorted(p.glob("*.ipynb")) if p.is_dir() else [p])
    return found


NOTEBOOKS = _notebooks()


def _unavailable(reason: str) -> None:
    """Skip locally; fail on CI, where the browser test must run."""
    if ON_CI:
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(settings_dir: Path) -> None:
    """JupyterLab user settings: render every cell, never autosave, never phone home."""
    settings = {
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
        "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
        "@jupyterlab/apputils-extension/notification": {
            "fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True},
    }
    for plugin, values in settings.items():
        pkg, name = plugin.rsplit("/", 1)
        path = settings_dir / pkg / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _get_json(url: str, timeout: float = 5.0):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


@pytest.fixture(scope="module")
def lab():
    """A JupyterLab server on a free loopback port serving the notebooks' common directory."""
    if not NOTEBOOKS:
        pytest.skip("no notebooks")
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        _unavailable("jupyterlab is not installed (pip install -e '.[dev]')")
    root_dir = Path(os.path.commonpath([str(p.parent) for p in NOTEBOOKS]))
    tmp = Path(tempfile.mkdtemp(prefix="memorykit-lab-"))
    _write_settings(tmp / "settings")
    (tmp / "workspaces").mkdir()
    port = _free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           "--ServerApp.port_retries=0", "--IdentityProvider.token=", "--ServerApp.password=",
           "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={root_dir}",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp / "server.log", "w+")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, cwd=root_dir)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail("JupyterLab did not start:\n" + log.read()[-3000:], pytrace=False)
            try:
                _get_json(url + "api/status", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        yield {"url": url, "root": root_dir, "log": tmp / "server.log"}
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        _unavailable(f"{CHROMIUM} is missing (./run test installs Debian's chromium as root)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


# --- JavaScript run in the page (the app is exposed as window.jupyterapp) ---------------------

JS_READY = """(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return 'no app';
  const w = app.shell.currentWidget;
  if (!w || !w.context || w.context.path !== path) return 'no notebook panel';
  const s = w.sessionContext;
  if (!w.context.isReady) return 'context not ready';
  if (!s || !s.session || !s.session.kernel) return 'no kernel';
  const st = s.session.kernel.status;
  return st === 'idle' ? 'ready' : 'kernel ' + st;
}"""

JS_STATE = """() => {
  const w = window.jupyterapp.shell.currentWidget;
  const cells = w.content.model.cells;
  const out = {code: 0, counts: [], errors: [], kernel: null};
  for (let i = 0; i < cells.length; i++) {
    const c = cells.get(i);
    if (c.type !== 'code') continue;
    out.code += 1;
    out.counts.push(c.executionCount);
    for (const o of c.outputs.toJSON()) {
      if (o.output_type === 'error') {
        out.errors.push('cell ' + i + ': ' + o.ename + ': ' + o.evalue);
      }
    }
  }
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  out.kernel = k ? k.status : 'none';
  out.busyPrompts = Array.from(document.querySelectorAll('.jp-InputPrompt'))
      .filter(p => p.textContent.includes('*')).length;
  return out;
}"""

JS_PAGE_ERRORS = """() => {
  const bad = [];
  for (const el of document.querySelectorAll(
      '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')) {
    const t = el.textContent;
    if (t.includes('Traceback') || /\\b\\w+(Error|Exception)\\b/.test(t)) bad.push(t.slice(0, 800));
  }
  for (const el of document.querySelectorAll('.jp-OutputArea-output .jp-RenderedText')) {
    const t = el.textContent;
    if (t.includes('Traceback (most recent call last)') || t.includes('Error displaying widget')
        || t.includes('Failed to load model class')) bad.push(t.slice(0, 800));
  }
  return bad;
}"""

JS_PLOT_DATA = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd => {
  const keys = ['x', 'y', 'z', 'values', 'text'];
  const arr = v => (v && typeof v === 'object' && typeof v.length === 'number') ? Array.from(v) : v;
  return JSON.stringify((gd.data || []).map(t => {
    const o = {};
    for (const k of keys) if (t[k] !== undefined) o[k] = Array.isArray(t[k]) ? t[k].map(arr) : arr(t[k]);
    return o;
  }));
})"""

JS_PLOTS_FILLED = """() => {
  const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
  return plots.length > 0 && plots.every(gd => (gd.data || []).length > 0);
}"""


def _screenshot(page, name: str) -> str:
    try:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        return f" (screenshot: {path})"
    except Exception as exc:  # the page may be gone
        return f" (no screenshot: {exc})"


def _wait(page, what: str, fn, timeout: float, interval: float = 0.25):
    """Poll ``fn() -> (done, detail)`` until done; fail naming ``what`` after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    detail = None
    while time.monotonic() < deadline:
        ok, detail = fn()
        if ok:
            return detail
        page.wait_for_timeout(interval * 1000)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last: {detail!r}")


def _shutdown_sessions(url: str) -> None:
    try:
        for s in _get_json(url + "api/sessions"):
            req = urllib.request.Request(url + f"api/sessions/{s['id']}", method="DELETE")
            urllib.request.urlopen(req, timeout=10).close()
    except (OSError, urllib.error.URLError, ValueError):
        pass


def _interactive(nb_path: Path) -> bool:
    meta = json.loads(nb_path.read_text(encoding="utf-8")).get("metadata", {})
    return meta.get("memorykit", {}).get("interactive", True) is not False


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _params():
    if not NOTEBOOKS:
        return [pytest.param(None, id="no-notebooks",
                             marks=pytest.mark.skip(reason="no notebooks in notebooks/ yet"))]
    return [pytest.param(p, id=p.name) for p in NOTEBOOKS]


@pytest.mark.parametrize("nb_path", _params())
def test_notebook_runs_and_reacts_in_jupyterlab(nb_path: Path, lab, browser):
    t0 = time.monotonic()
    before = _sha(nb_path)
    rel = nb_path.resolve().relative_to(lab["root"]).as_posix()
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    console_errors: list[str] = []
    page.set_default_timeout(10_000)  # bounds every click/press/wait that has no explicit one
    page.on("pageerror", lambda exc: console_errors.append(f"pageerror: {exc}"[:500]))
    page.on("console", lambda msg: console_errors.append(f"console.{msg.type}: {msg.text}"[:500])
            if msg.type == "error" else None)
    try:
        try:
            page.goto(lab["url"] + "lab/tree/" + quote(rel) + "?reset", timeout=LOAD_TIMEOUT_S * 1000)
            def ready():
                status = page.evaluate(JS_READY, rel)
                return status == "ready", status

            _wait(page, "the notebook to open with an idle kernel", ready, LOAD_TIMEOUT_S)

            # Stored outputs carry [n] already: clear them so the prompts prove a fresh run.
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
            state = page.evaluate(JS_STATE)
            assert state["code"] > 0, "the notebook has no code cells"
            assert all(c is None for c in state["counts"]), f"outputs not cleared: {state['counts']}"

            page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

            def done():
                s = page.evaluate(JS_STATE)
                if s["errors"]:
                    raise AssertionError("a cell raised: " + "; ".join(s["errors"]))
                if s["kernel"] in ("dead", "unknown", "none"):
                    raise AssertionError(f"kernel is {s['kernel']}")
                finished = (all(isinstance(c, int) for c in s["counts"]) and s["kernel"] == "idle"
                            and s["busyPrompts"] == 0)
                return (finished, s)

            state = _wait(page, "every code cell to show an execution count [n]", done,
                             RUN_TIMEOUT_S)
            assert len(set(state["counts"])) == len(state["counts"]), (
                f"execution counts are not distinct: {state['counts']}")
            t_run = time.monotonic() - t0

            # Let widgets and figures render (they arrive after the kernel goes idle).
            interactive = _interactive(nb_path)
            if interactive:
                page.wait_for_selector(".js-plotly-plot", timeout=20_000, state="attached")
                page.wait_for_selector(".widget-slider .noUi-handle", timeout=20_000,
                                       state="attached")
                # FigureWidgets fill their traces asynchronously after the view attaches.
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not page.evaluate(JS_PLOTS_FILLED):
                    page.wait_for_timeout(250)
                empty = page.evaluate(
                    "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
                    ".filter(gd => !(gd.data || []).length).length")
                assert not empty, (
                    f"{empty} plotly figure(s) rendered with no traces 20 s after the run "
                    "(the FigureWidget's state never reached plotly.js in the browser)")
                page.wait_for_timeout(500)
            else:
                page.wait_for_timeout(1000)
            bad = page.evaluate(JS_PAGE_ERRORS)
            assert not bad, "error output in the page:\n" + "\n---\n".join(bad)

            if interactive:
                _check_a_slider_moves_a_figure(page)
            print(f"\n{nb_path.name}: ran in {t_run:.1f} s, total {time.monotonic() - t0:.1f} s")
        except Exception as exc:
            shot = _screenshot(page, nb_path.stem)
            if console_errors:
                shot += "\nbrowser errors:\n  " + "\n  ".join(console_errors[:8])
            raise AssertionError(f"{nb_path.name}: {exc}{shot}") from exc
    finally:
        context.close()
        _shutdown_sessions(lab["url"])
    assert _sha(nb_path) == before, f"{nb_path.name} was modified on disk by the browser run"


def _check_a_slider_moves_a_figure(page) -> None:
    plots = page.locator(".js-plotly-plot")
    handles = page.locator(".widget-slider .noUi-handle")
    assert plots.count() >= 1, "no plotly figure (.js-plotly-plot) rendered"
    n = handles.count()
    assert n >= 1, "no ipywidgets slider (.widget-slider .noUi-handle) rendered"
    tried = []
    for i in range(min(n, MAX_SLIDERS)):
        handle = handles.nth(i)
        slider = page.locator(".widget-slider").nth(i)
        readout = slider.locator(".widget-readout")
        value = readout.first.text_content() if readout.count() else None
        before = page.evaluate(JS_PLOT_DATA)
        handle.scroll_into_view_if_needed(timeout=5000)
        handle.focus()
        for _ in range(3):
            handle.press("ArrowRight")
        if readout.count() and readout.first.text_content() == value:
            for _ in range(6):  # at the top of its range: go the other way
                handle.press("ArrowLeft")
        deadline = time.monotonic() + SLIDER_TIMEOUT_S
        while time.monotonic() < deadline:
            after = page.evaluate(JS_PLOT_DATA)
            if after != before:
                return
            page.wait_for_timeout(250)
        new_value = readout.first.text_content() if readout.count() else None
        tried.append(f"slider {i} ({value!r} -> {new_value!r})")
    raise AssertionError("no slider changed the data of any plotly figure: " + ", ".join(tried))
