"""Drive real JupyterLab in Debian's Chromium: shared by the browser tests and ``bench.browser``.

What a person sees is checked here, not what the kernel believes it sent:

* ``LabServer``: JupyterLab on a free loopback port with throwaway settings (every cell
  rendered, no autosave, no news or update checks).
* ``launch_chromium``: Debian's ``/usr/bin/chromium`` through playwright (never
  ``playwright install``), with the flags this closed network needs.
* ``NotebookSession``: open a notebook, clear its stored outputs, Run All, wait for every prompt,
  run code in its kernel (``kernel_json``), read every rendered plotly figure (``gd.data``,
  ``gd._fullData``, ``gd.calcdata``) and the bounding boxes of its text.
* ``compare_figures`` / ``layout_problems``: the kernel's ``FigureWidget`` traces against what
  plotly.js drew (same traces, same number of points, same values, heat maps with a non-empty
  ``z``, visible), and titles, legends, colour bars and axis titles that overlap or are clipped.
* ``text_problems``: the text the kernel's figures hold (text-mode labels, annotations, titles,
  legend entries, colour bar titles) against the text plotly.js wrote in the SVG.

Nothing here writes the notebook on disk (autosave is off).
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


def write_lab_settings(settings_dir: Path) -> None:
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


class LabError(RuntimeError):
    """JupyterLab or the page did not do what was asked in time."""


@contextmanager
def lab_server(root_dir: Path, start_timeout: float = 60.0) -> Iterator[dict[str, Any]]:
    """A JupyterLab server serving ``root_dir``; yields ``{"url", "root", "log"}``."""
    tmp = Path(tempfile.mkdtemp(prefix="memorykit-lab-"))
    write_lab_settings(tmp / "settings")
    (tmp / "workspaces").mkdir()
    port = free_port()
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
        deadline = time.monotonic() + start_timeout
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise LabError("JupyterLab did not start:\n" + log.read()[-3000:])
            try:
                get_json(url + "api/status", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        yield {"url": url, "root": Path(root_dir), "log": tmp / "server.log"}
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium driven by playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def shutdown_sessions(url: str) -> None:
    try:
        for s in get_json(url + "api/sessions"):
            req = urllib.request.Request(url + f"api/sessions/{s['id']}", method="DELETE")
            urllib.request.urlopen(req, timeout=10).close()
    except (OSError, urllib.error.URLError, ValueError):
        pass


# --- JavaScript run in the page (the app is exposed as window.jupyterapp) ---------------------

# Installed before any page script (every NotebookSession): wraps plotly.js's drawing calls
# (window.Plotly is set by plotly's widget bundle when it loads) and records when each started,
# returned and finished painting; records every keydown and every websocket message received
# (time and size). One clock for all: performance.now(). Used to wait until figures are settled
# and, by bench.browser, to time slider round trips.
DRAW_HOOK = """
(() => {
  window.__mkDraws = [];
  window.__mkKeys = [];
  window.__mkRecv = [];
  // when each websocket message from the server arrives (kernel messages included), and its size
  const RealWS = window.WebSocket;
  window.WebSocket = function(...args) {
    const ws = new RealWS(...args);
    ws.addEventListener('message', e => {
      window.__mkRecv.push({t: performance.now(), bytes: e.data.byteLength || e.data.length || 0});
      if (window.__mkRecv.length > 5000) window.__mkRecv.splice(0, 1000);
    });
    return ws;
  };
  window.WebSocket.prototype = RealWS.prototype;
  Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
  document.addEventListener('keydown', e => window.__mkKeys.push(e.timeStamp), true);
  let real;
  Object.defineProperty(window, 'Plotly', {configurable: true, get() { return real; },
    set(P) {
      real = P;
      for (const fn of ['newPlot', 'react', 'update', 'restyle', 'relayout']) {
        const orig = P[fn];
        if (typeof orig !== 'function' || orig.__mkWrapped) continue;
        const wrapped = function(gd, ...args) {
          const start = performance.now();
          window.__mkStarted = (window.__mkStarted || 0) + 1;
          let syncEnd = null;
          const done = () => requestAnimationFrame(() => window.__mkDraws.push(
              {fn, start, syncEnd, end: performance.now(),
               plot: Array.from(document.querySelectorAll('.js-plotly-plot')).indexOf(gd)}));
          let p;
          try { p = orig.call(this, gd, ...args); }
          catch (err) { syncEnd = performance.now(); done(); throw err; }
          syncEnd = performance.now();
          Promise.resolve(p).then(done, done);
          return p;
        };
        wrapped.__mkWrapped = true;
        P[fn] = wrapped;
      }
    }});
})();
"""


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
    if (t.includes('Traceback') || /\\b\\w+(Error|Exception|Warning)\\b/.test(t)) bad.push(t.slice(0, 800));
  }
  for (const el of document.querySelectorAll('.jp-OutputArea-output .jp-RenderedText')) {
    const t = el.textContent;
    if (t.includes('Traceback (most recent call last)') || t.includes('Error displaying widget')
        || t.includes('Failed to load model class')) bad.push(t.slice(0, 800));
  }
  return bad;
}"""

# Run Python in the notebook's kernel and collect what it prints (stdout only).
JS_KERNEL_EXEC = """async (code) => {
  const w = window.jupyterapp.shell.currentWidget;
  const kernel = w.sessionContext.session.kernel;
  const future = kernel.requestExecute({code, silent: false, store_history: false});
  let out = '', err = null;
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type;
    if (t === 'stream' && msg.content.name === 'stdout') out += msg.content.text;
    if (t === 'error') err = msg.content.ename + ': ' + msg.content.evalue;
  };
  await future.done;
  return {out, err};
}"""

# Every rendered plotly figure: its traces as plotly.js holds them (data and fullData) and
# the shape of what it computed to draw (calcdata), keyed by trace uid.
JS_RENDERED_FIGURES = """() => {
  const plain = v => {
    if (v === undefined || v === null) return v;
    if (ArrayBuffer.isView(v)) return Array.from(v);
    if (Array.isArray(v)) return v.map(plain);
    return v;
  };
  const figs = [];
  const plots = Array.from(document.querySelectorAll('.js-plotly-plot'));
  plots.forEach((gd, index) => {
    const traces = (gd.data || []).map((t, i) => {
      const full = (gd._fullData || []).find(f => f.index === i) || {};
      const cd = (gd.calcdata || [])[i];
      let zRows = null, zCells = null;
      if (cd && cd[0] && cd[0].z) {
        zRows = cd[0].z.length;
        zCells = cd[0].z.reduce((n, row) => n + (row ? row.filter(
            v => v !== null && v !== undefined && !Number.isNaN(v)).length : 0), 0);
      }
      const o = {uid: t.uid, type: t.type || 'scatter', name: t.name,
                 visible: t.visible === undefined ? true : t.visible,
                 fullVisible: full.visible, zRows, zCells};
      for (const k of ['x', 'y', 'z', 'values', 'labels', 'text', 'r', 'theta']) {
        let v = t[k];
        // {dtype, bdata} typed-array specs are decoded by plotly.js into fullData
        if (v && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v) && v.bdata !== undefined)
          v = full[k];
        if (v !== undefined && v !== null && typeof v === 'object') o[k] = plain(v);
      }
      return o;
    });
    const meta = gd.layout && gd.layout.meta;
    figs.push({index, meta: meta === undefined ? null : meta, traces});
  });
  // one string: playwright moves a string ~10x faster than the same data as nested arrays
  // (lesson 07: 0.1 s, not 1.1 s, per comparison); NaN and Infinity arrive as null, as the
  // kernel sends them
  return JSON.stringify(figs);
}"""

# A cheap fingerprint of every rendered figure's data: per trace, the length and the sum of
# each data array (strings by their total length). Differs when a redraw changed the data.
JS_PLOT_FINGERPRINT = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(gd =>
  (gd._fullData || []).map(t => ['x', 'y', 'z', 'text', 'values'].map(k => {
    let n = 0, sum = 0;
    const walk = v => {
      if (v === null || v === undefined) return;
      if (typeof v === 'number') { n += 1; if (Number.isFinite(v)) sum += v; return; }
      if (typeof v === 'string') { n += 1; sum += v.length; return; }
      if (typeof v === 'object' && typeof v.length === 'number') {
        for (let i = 0; i < v.length; i++) walk(v[i]);
      }
    };
    walk(t[k]);
    return n + ':' + sum.toPrecision(12);
  }).join(',')).join('|')).join('#')"""

# Bounding boxes (page pixels) of the text-bearing parts of every figure.
JS_FIGURE_BOXES = """() => {
  const box = el => { const r = el.getBoundingClientRect();
    return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom, w: r.width, h: r.height}; };
  const text = el => (el.textContent || '').trim();
  const out = [];
  document.querySelectorAll('.js-plotly-plot').forEach((gd, index) => {
    const svg = gd.querySelector('.main-svg');
    if (!svg) return;
    const items = [];
    const add = (kind, el, label) => {
      const b = box(el);
      if (b.w > 0 && b.h > 0) items.push({kind, label: label || text(el), ...b});
    };
    gd.querySelectorAll('.infolayer .gtitle').forEach(el => add('title', el));
    gd.querySelectorAll('.infolayer g[class^="g-"][class$="title"]:not(.g-gtitle) text').forEach(
        el => add('axis title', el));
    gd.querySelectorAll('.annotation').forEach(el => add('annotation', el));
    gd.querySelectorAll('.infolayer .legend').forEach(el => {
      const bg = el.querySelector('.bg'); add('legend', bg || el, 'legend'); });
    gd.querySelectorAll('.infolayer .colorbar').forEach(el => add('colorbar', el, 'colour bar'));
    gd.querySelectorAll('.draglayer .nsewdrag').forEach(el => add('plot area', el,
        'plot area ' + (el.parentNode && el.parentNode.getAttribute('class') || '')));
    gd.querySelectorAll('.xtick text, .ytick text').forEach(el => {
      const parent = el.closest('g[class$="tick"]');
      add('tick', el, text(el));
      const item = items[items.length - 1];
      if (!item || item.label !== text(el)) return;
      item.axis = (el.closest('.subplot') ? el.closest('.subplot').getAttribute('class') : '') + ' '
          + (parent ? parent.getAttribute('class') : '');
      // the label's own rectangle turned as drawn (tick labels are often rotated 30-90 degrees)
      const b = el.getBBox(), m = el.getScreenCTM();
      if (m) item.corners = [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height],
          [b.x, b.y + b.height]].map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]);
    });
    const area = gd.closest('.jp-OutputArea-output') || gd.parentNode;
    out.push({index, figure: box(svg), output: area ? box(area) : null, items});
  });
  return out;
}"""


# The text plotly.js drew in each figure's SVG (what a person reads), and the parts plotly.js
# decided to draw (used axes, the legend, each trace's legend entry and colour bar) so that
# ``text_problems`` asks for the kernel's text only where plotly.js draws text at all.
JS_DRAWN_TEXT = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map((gd, index) => {
  const texts = sel => Array.from(gd.querySelectorAll(sel)).map(el => el.textContent);
  const fl = gd._fullLayout || {}, subplots = fl._subplots || {};
  const axes = {};
  for (const id of [...(subplots.xaxis || []), ...(subplots.yaxis || [])]) {
    const ax = fl[id[0] + 'axis' + id.slice(1)];
    axes[id] = {shown: !!ax && ax.visible !== false,
                drawn: texts('.infolayer .g-' + id + 'title text')};
  }
  const colorbars = {};
  gd.querySelectorAll('.infolayer g.colorbar').forEach(g => {
    const key = Array.from(g.classList).find(c => c.startsWith('cb') && c !== 'colorbar');
    const title = g.querySelector('.cbtitle text');
    colorbars[key] = title ? title.textContent : '';
  });
  const labels = {};
  gd.querySelectorAll('g.trace.scatter').forEach(g => {
    const cd = g.__data__, trace = cd && cd[0] && cd[0].trace;
    if (trace) labels[trace.uid] = Array.from(g.querySelectorAll('.textpoint text'))
        .map(el => el.textContent);
  });
  // a legend item is a trace's entry or a legend group's title (plotly.js marks it groupTitle)
  const legend = groupTitles => Array.from(gd.querySelectorAll('.legend g.traces')).filter(
      g => !!(g.__data__ && g.__data__[0] && g.__data__[0].groupTitle) === groupTitles)
      .map(g => (g.querySelector('.legendtext') || {}).textContent || '');
  const traces = (gd._fullData || []).map(t => ({uid: t.uid, visible: t.visible,
      showlegend: t.showlegend === true,
      colorbar: t.showscale === true || !!(t.marker && t.marker.showscale === true)}));
  return {index, traces, labels, axes, colorbars,
          title: texts('.infolayer .gtitle'), annotations: texts('.infolayer .annotation-text'),
          legendShown: fl.showlegend === true, legend: legend(false), legendGroups: legend(true),
          legendTitle: texts('.legend .legendtitletext')};
})"""


# Text in an explorer's output (slider labels, readouts, HTML) that runs past the output area's
# right edge, where the notebook cuts it off.
JS_OUTPUT_OVERFLOW = """() => {
  const out = [];
  document.querySelectorAll('.jp-Cell-outputArea').forEach(area => {
    if (!area.querySelector('.js-plotly-plot')) return;
    const right = area.getBoundingClientRect().right;
    const walker = document.createTreeWalker(area, NodeFilter.SHOW_TEXT);
    const seen = new Set();
    while (walker.nextNode()) {
      const node = walker.currentNode, el = node.parentElement;
      if (!node.textContent.trim() || !el || seen.has(el) || el.closest('.js-plotly-plot')) continue;
      seen.add(el);
      const range = document.createRange(); range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.width > 0 && r.right > right + 1) out.push(node.textContent.trim().slice(0, 60));
    }
  });
  return out;
}"""


class NotebookSession:
    """One notebook opened in JupyterLab in a fresh browser context."""

    def __init__(self, browser: Any, lab: dict[str, Any], nb_path: Path,
                 viewport: tuple[int, int] = (1400, 2000)) -> None:
        self.lab = lab
        self.nb_path = nb_path
        self.rel = nb_path.resolve().relative_to(Path(lab["root"]).resolve()).as_posix()
        self.context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        self.page = self.context.new_page()
        self.page.set_default_timeout(10_000)
        self.console_errors: list[str] = []
        self.page.on("pageerror", lambda exc: self.console_errors.append(f"pageerror: {exc}"[:500]))
        self.page.on("console", lambda msg: self.console_errors.append(
            f"console.{msg.type}: {msg.text}"[:500]) if msg.type == "error" else None)
        self.context.add_init_script(DRAW_HOOK)

    def close(self) -> None:
        try:
            self.context.close()
        finally:
            shutdown_sessions(self.lab["url"])

    def __enter__(self) -> "NotebookSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ waiting
    def wait(self, what: str, fn, timeout: float, interval: float = 0.25) -> Any:
        """Poll ``fn() -> (done, detail)`` until done; raise naming ``what`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        detail = None
        while time.monotonic() < deadline:
            ok, detail = fn()
            if ok:
                return detail
            self.page.wait_for_timeout(interval * 1000)
        raise LabError(f"timed out after {timeout:.0f} s waiting for {what}; last: {detail!r}")

    # ------------------------------------------------------------------ running
    def open(self, load_timeout: float = 45.0) -> None:
        self.page.goto(self.lab["url"] + "lab/tree/" + quote(self.rel) + "?reset",
                       timeout=load_timeout * 1000)

        def ready():
            status = self.page.evaluate(JS_READY, self.rel)
            return status == "ready", status

        self.wait("the notebook to open with an idle kernel", ready, load_timeout)

    def clear_outputs(self) -> dict[str, Any]:
        self.page.evaluate(
            "() => window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs')")
        return self.state()

    def state(self) -> dict[str, Any]:
        return self.page.evaluate(JS_STATE)

    def run_all(self, timeout: float = 90.0) -> dict[str, Any]:
        self.page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")

        def done():
            s = self.state()
            if s["errors"]:
                raise LabError("a cell raised: " + "; ".join(s["errors"]))
            if s["kernel"] in ("dead", "unknown", "none"):
                raise LabError(f"kernel is {s['kernel']}")
            finished = (all(isinstance(c, int) for c in s["counts"]) and s["kernel"] == "idle"
                        and s["busyPrompts"] == 0)
            return finished, s

        return self.wait("every code cell to show an execution count [n]", done, timeout)

    def page_errors(self) -> list[str]:
        return self.page.evaluate(JS_PAGE_ERRORS)

    def kernel_idle(self) -> bool:
        return self.state()["kernel"] == "idle"

    def draw_count(self) -> int:
        """plotly.js drawing calls that have finished painting so far (see DRAW_HOOK)."""
        return self.page.evaluate("() => window.__mkDraws.length")

    def wait_settled(self, timeout: float = 30.0, quiet_ms: float = 500.0) -> dict[str, Any]:
        """Wait until the kernel is idle and no plotly.js drawing happened for ``quiet_ms``."""
        def settled():
            s = self.page.evaluate(
                """() => ({n: window.__mkDraws.length, now: performance.now(),
                          last: window.__mkDraws.length ? window.__mkDraws[window.__mkDraws.length - 1].end : 0,
                          started: window.__mkStarted || 0})""")
            quiet = s["now"] - s["last"] > quiet_ms and s["started"] == s["n"]
            return quiet and self.kernel_idle(), s

        return self.wait("the kernel to go idle and the figures to stop redrawing", settled,
                         timeout, interval=0.1)

    def kernel_json(self, code: str, expression: str) -> Any:
        """Run ``code`` in the kernel, then return ``expression`` evaluated there.

        The value travels through a temporary file: the server drops iopub output above its
        data-rate limit (a 3 MB print arrives empty), and figures can be that large.
        """
        fd, name = tempfile.mkstemp(prefix="memorykit-kernel-", suffix=".json")
        os.close(fd)
        try:
            wrapped = (f"{code}\nimport json as _mk_json\n"
                       f"with open({name!r}, 'w') as _mk_f:\n"
                       f"    _mk_json.dump({expression}, _mk_f)\n")
            res = self.page.evaluate(JS_KERNEL_EXEC, wrapped)
            if res["err"]:
                raise LabError(f"kernel code raised {res['err']}")
            with open(name) as f:
                return json.load(f)
        finally:
            os.unlink(name)

    # ------------------------------------------------------------------ figures
    def rendered_figures(self) -> list[dict[str, Any]]:
        return json.loads(self.page.evaluate(JS_RENDERED_FIGURES))

    def drawn_texts(self) -> list[dict[str, Any]]:
        return self.page.evaluate(JS_DRAWN_TEXT)

    def figure_boxes(self) -> list[dict[str, Any]]:
        return self.page.evaluate(JS_FIGURE_BOXES)

    def output_overflow(self) -> list[str]:
        """Text of figure outputs cut off at the output area's right edge."""
        return self.page.evaluate(JS_OUTPUT_OVERFLOW)

    def kernel_figures(self) -> list[dict[str, Any]]:
        """Every live ``FigureWidget`` in the kernel, traces keyed by uid (see KERNEL_FIGURES)."""
        return self.kernel_json(KERNEL_FIGURES, "_mk_figures()")

    def output_screenshots(self, directory: Path, stem: str) -> list[Path]:
        """A PNG of every cell output that holds a plotly figure (sliders, figure, readout)."""
        outputs = self.page.locator(".jp-Cell-outputArea:has(.js-plotly-plot)")
        paths = []
        for i in range(outputs.count()):
            path = directory / f"{stem}-figure{i + 1}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            outputs.nth(i).scroll_into_view_if_needed(timeout=5000)
            outputs.nth(i).screenshot(path=str(path))
            paths.append(path)
        return paths

    def screenshot(self, path: Path, full_page: bool = False) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page)
        return path


# Python run in the kernel: what every live FigureWidget holds, in the same shape as
# JS_RENDERED_FIGURES (arrays as lists, NaN as null so JSON stays valid).
KERNEL_FIGURES = r"""
import gc as _mk_gc, math as _mk_math
def _mk_plain(v):
    import numpy as _np
    if isinstance(v, dict) and "bdata" in v and "dtype" in v:  # plotly typed-array spec
        import base64 as _b64
        arr = _np.frombuffer(_b64.b64decode(v["bdata"]), dtype=_np.dtype(v["dtype"]))
        shape = v.get("shape")
        if shape:
            arr = arr.reshape([int(n) for n in str(shape).split(",")])
        v = arr
    if isinstance(v, _np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [_mk_plain(x) for x in v]
    if isinstance(v, float) and not _mk_math.isfinite(v):
        return None
    return v
def _mk_figures():
    import plotly.graph_objects as _go
    out = []
    try:  # every live widget by model id (ipywidgets 8): a walk of all objects costs ~0.2 s
        from ipywidgets.widgets.widget import _instances as _mk_widgets
        objects = list(_mk_widgets.values())
    except ImportError:
        objects = _mk_gc.get_objects()
    for obj in objects:
        try:
            if not isinstance(obj, _go.FigureWidget) or not obj._view_count:
                continue
        except ReferenceError:  # a dead weakref proxy
            continue
        traces = []
        for t in obj.data:
            d = {"uid": t.uid, "type": t.type, "name": getattr(t, "name", None),
                 "visible": True if t.visible is None else t.visible}
            for k in ("x", "y", "z", "values", "labels", "text", "r", "theta"):
                if k in t and t[k] is not None and not isinstance(t[k], str):
                    d[k] = _mk_plain(t[k])
            if "text" in t and isinstance(t.text, str):
                d["text_all"] = t.text  # one text for every point
            d["mode"] = t.mode if "mode" in t else None
            d["showlegend"] = t.showlegend
            d["legendgroup"] = t.legendgroup if "legendgroup" in t else None
            d["group_title"] = t.legendgrouptitle.text if "legendgrouptitle" in t else None
            bar = t.colorbar if "colorbar" in t else t.marker.colorbar if "marker.colorbar" in t else None
            d["colorbar_title"] = bar.title.text if bar is not None else None
            traces.append(d)
        meta = obj.layout.meta
        out.append({"model_id": obj.model_id, "meta": _mk_plain(meta) if meta is not None else None,
                    "traces": traces, "texts": _mk_layout_texts(obj.layout.to_plotly_json())})
    return out
def _mk_title(container):
    title = (container or {}).get("title")
    return title.get("text") if isinstance(title, dict) else title
def _mk_layout_texts(lay):
    import re as _re
    axes, coloraxes = {}, {}
    for key, value in lay.items():
        m = _re.fullmatch(r"([xy])axis(\d*)", key)
        if m and value.get("visible", True) is not False and _mk_title(value):
            axes[m[1] + m[2]] = _mk_title(value)
        if _re.fullmatch(r"coloraxis\d*", key) and _mk_title(value.get("colorbar")):
            coloraxes[key] = _mk_title(value.get("colorbar"))
    return {"title": _mk_title(lay), "axes": axes, "coloraxes": coloraxes,
            "legend_title": _mk_title(lay.get("legend")),
            "annotations": [a.get("text") for a in lay.get("annotations", [])
                            if a.get("visible", True) is not False and a.get("text")]}
"""


# --- comparing what the kernel holds with what the browser drew -------------------------------

def _flat(v: Any) -> list[Any]:
    if isinstance(v, list):
        out: list[Any] = []
        for x in v:
            out.extend(_flat(x))
        return out
    return [v]


def _is_nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (
        isinstance(v, str) and v.lower() == "nan")


def _same_value(a: Any, b: Any, rel: float = 1e-5) -> bool:
    if _is_nan(a) or _is_nan(b):
        return _is_nan(a) and _is_nan(b)
    if a is None or b is None:
        # NaN travels as null one way and may be NaN (-> null in JSON) the other
        return (a is None or (isinstance(a, float) and math.isnan(a))) and (
            b is None or (isinstance(b, float) and math.isnan(b)))
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-6)
    return str(a) == str(b)


def compare_trace(kernel: dict[str, Any], drawn: dict[str, Any] | None) -> list[str]:
    """Differences between one kernel trace and the rendered trace with its uid."""
    label = f"trace {kernel.get('name') or kernel['type']!r} (uid {kernel['uid'][:8]})"
    if drawn is None:
        return [f"{label}: not in the rendered figure"]
    problems = []
    for key in ("x", "y", "z", "values", "labels", "text", "r", "theta"):
        if key not in kernel:
            continue
        want = _flat(kernel[key])
        got = _flat(drawn[key]) if key in drawn else None
        if got is None:
            if want:
                problems.append(f"{label}: {key} has {len(want)} values in the kernel, "
                                "none in the browser")
            continue
        if len(got) != len(want):
            problems.append(f"{label}: {key} has {len(want)} values in the kernel, "
                            f"{len(got)} in the browser")
            continue
        bad = [i for i, (a, b) in enumerate(zip(want, got)) if not _same_value(a, b)]
        if bad:
            i = bad[0]
            problems.append(f"{label}: {key} differs at {len(bad)} of {len(want)} points "
                            f"(first at {i}: kernel {want[i]!r}, browser {got[i]!r})")
    kernel_visible = kernel.get("visible", True)
    has_points = any(_flat(kernel[k]) for k in ("x", "y", "z", "values", "r") if k in kernel)
    # plotly.js marks a trace with no points invisible: that is not a drawing fault
    if kernel_visible is True and has_points and drawn.get("fullVisible") is not True:
        problems.append(f"{label}: visible in the kernel, plotly.js drew it with visible="
                        f"{drawn.get('fullVisible')!r}")
    if kernel["type"] in ("heatmap", "contour") and kernel_visible is True:
        cells = [v for v in _flat(kernel.get("z", [])) if v is not None]
        if cells and not drawn.get("zCells"):
            problems.append(f"{label}: heat map with {len(cells)} values in the kernel drew "
                            f"{drawn.get('zCells')!r} cells")
    return problems


def compare_figures(kernel_figs: list[dict[str, Any]],
                    drawn_figs: list[dict[str, Any]]) -> list[str]:
    """Every kernel FigureWidget trace must be drawn, completely and with the same values."""
    drawn_by_uid: dict[str, dict[str, Any]] = {}
    for fig in drawn_figs:
        for t in fig["traces"]:
            if t.get("uid"):
                drawn_by_uid[t["uid"]] = t
    problems = []
    for fig in kernel_figs:
        for t in fig["traces"]:
            problems.extend(compare_trace(t, drawn_by_uid.get(t["uid"])))
    return problems


# --- text: what the kernel's figure says against what plotly.js wrote in the SVG ---------------

def _written(v: Any) -> str:
    """A text as the kernel holds it, numbers as JavaScript writes them (1.0 as 1)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _text(v: Any) -> str:
    """A text as a reader sees it: HTML tags and entities resolved, whitespace ignored (plotly.js
    draws ``<br>`` as separate lines)."""
    return "".join(html.unescape(re.sub(r"<[^>]*>", "", _written(v))).split())


def _missing_and_extra(want: list[Any], got: list[Any]) -> tuple[list[str], list[str]]:
    """Texts of ``want`` not drawn and drawn texts not in ``want``, as written (compared as
    ``_text`` sees them)."""
    w, g = Counter(_text(v) for v in want), Counter(_text(v) for v in got)
    written = {_text(v): _written(v) for v in [*got, *want]}
    return ([written[t] for t in sorted((w - g).elements())],
            [written[t] for t in sorted((g - w).elements())])


def _point_count(trace: dict[str, Any]) -> int:
    arrays = [trace[k] for k in ("x", "y") if k in trace]
    return min(len(a) for a in arrays) if arrays else 0


def trace_labels(trace: dict[str, Any]) -> list[Any] | None:
    """The labels a kernel trace asks plotly.js to write (``None``: it writes none): a scatter
    whose mode includes "text", one per point with a position and a non-empty text."""
    if trace.get("type") != "scatter" or "text" not in (trace.get("mode") or "") or \
            trace.get("visible", True) is not True:
        return None
    n = _point_count(trace)
    texts = [trace["text_all"]] * n if "text_all" in trace else list(trace.get("text") or [])[:n]
    placed = [all(not _is_nan(trace[k][i]) for k in ("x", "y") if k in trace) for i in range(n)]
    return [t for i, t in enumerate(texts) if placed[i] and t is not None and str(t) != ""]


def _missing(what: str, want: list[Any], got: list[Any], both_ways: bool = True) -> list[str]:
    missing, extra = _missing_and_extra(want, got)
    problems = []
    if missing:
        problems.append(f"{what}: drew {len(want) - len(missing)} of the kernel's {len(want)}; "
                        f"missing {', '.join(repr(t) for t in missing[:8])}")
    if extra and both_ways:
        problems.append(f"{what}: drew text the kernel does not hold: "
                        f"{', '.join(repr(t) for t in extra[:8])}")
    return problems


def text_problems(kernel_figs: list[dict[str, Any]], drawn: list[dict[str, Any]]) -> list[str]:
    """Text the kernel's figure holds that plotly.js did not write in the SVG (or wrote besides):
    each text-mode trace's labels, annotations, the figure's and the used axes' titles, legend
    entries and its title, colour bar titles. Which parts plotly.js draws at all (a used axis,
    the legend, a trace's legend entry or colour bar) is plotly.js's own decision, read from
    ``gd._fullLayout`` / ``gd._fullData``; the strings come from the kernel. A rendered figure
    no kernel ``FigureWidget`` holds (a static figure) is not compared."""
    by_uid = {t["uid"]: (fig, t) for fig in kernel_figs for t in fig["traces"]}
    problems = []
    for d in drawn:
        uids = [t["uid"] for t in d["traces"] if t["uid"] in by_uid]
        if not uids:
            continue
        fig = by_uid[uids[0]][0]
        texts, where = fig["texts"], f"figure {d['index'] + 1}"
        if texts["title"]:
            problems += _missing(f"{where}, title", [texts["title"]], d["title"])
        for ax, title in texts["axes"].items():
            if d["axes"].get(ax, {}).get("shown"):
                problems += _missing(f"{where}, {ax}-axis title", [title], d["axes"][ax]["drawn"])
        problems += _missing(f"{where}, annotations", texts["annotations"], d["annotations"])
        shown = {t["uid"]: t for t in d["traces"]}
        if d["legendShown"]:
            names = [by_uid[u][1]["name"] for u in uids
                     if shown[u]["showlegend"] and shown[u]["visible"] is not False
                     and by_uid[u][1].get("showlegend") is not False and by_uid[u][1]["name"]]
            problems += _missing(f"{where}, legend entries", names, d["legend"])
            groups: dict[str, Any] = {}  # a group's title: its first trace's that has one
            for u in uids:
                t = by_uid[u][1]
                if shown[u]["showlegend"] and shown[u]["visible"] is not False and \
                        t.get("showlegend") is not False and t.get("legendgroup"):
                    groups[t["legendgroup"]] = groups.get(t["legendgroup"]) or t.get("group_title")
            problems += _missing(f"{where}, legend group titles", [g for g in groups.values() if g],
                                 d.get("legendGroups", []))
            if texts["legend_title"]:
                problems += _missing(f"{where}, legend title", [texts["legend_title"]],
                                     d["legendTitle"])
        bars = {f"cb{u}": by_uid[u][1]["colorbar_title"] for u in uids if shown[u]["colorbar"]}
        bars.update({f"cb{k}": v for k, v in texts["coloraxes"].items() if f"cb{k}" in d["colorbars"]})
        for key, title in bars.items():
            if title:
                problems += _missing(f"{where}, colour bar title", [title],
                                     [d["colorbars"][key]] if key in d["colorbars"] else [])
        for u in uids:
            kernel = by_uid[u][1]
            want = trace_labels(kernel)
            if want is not None:
                problems += _missing(f"{where}, labels of trace {kernel['name']!r} "
                                     f"(uid {u[:8]})", want, d["labels"].get(u, []))
    return problems


# --- layout: overlaps and clipping --------------------------------------------------------------

def _overlap(a: dict[str, float], b: dict[str, float], slack: float = 1.0) -> float:
    """Overlapping area of two boxes shrunk by ``slack`` px on every side (0 if none)."""
    w = min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) - 2 * slack
    h = min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) - 2 * slack
    return w * h if w > 0 and h > 0 else 0.0


def _polygons_overlap(a: list[list[float]], b: list[list[float]], slack: float = 1.0) -> bool:
    """Whether two convex polygons overlap by more than ``slack`` px (separating axes)."""
    for poly in (a, b):
        for i in range(len(poly)):
            x1, y1 = poly[i]
            x2, y2 = poly[(i + 1) % len(poly)]
            nx, ny = y2 - y1, x1 - x2
            norm = math.hypot(nx, ny) or 1.0
            nx, ny = nx / norm, ny / norm
            pa = [nx * x + ny * y for x, y in a]
            pb = [nx * x + ny * y for x, y in b]
            if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= slack:
                return False
    return True


def _ticks_overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.get("corners") and b.get("corners"):
        return _polygons_overlap(a["corners"], b["corners"])
    return bool(_overlap(a, b))


def _inside(inner: dict[str, float], outer: dict[str, float], slack: float = 1.0) -> bool:
    return (inner["x0"] >= outer["x0"] - slack and inner["y0"] >= outer["y0"] - slack
            and inner["x1"] <= outer["x1"] + slack and inner["y1"] <= outer["y1"] + slack)


LABELS = ("title", "axis title", "annotation", "legend", "colorbar")


def layout_problems(fig_boxes: dict[str, Any]) -> list[str]:
    """Overlapping titles / legends / colour bars / axis titles, and text outside the figure."""
    items = fig_boxes["items"]
    problems = []
    labels = [i for i in items if i["kind"] in LABELS]
    for a_i, a in enumerate(labels):
        for b in labels[a_i + 1:]:
            if _overlap(a, b):
                problems.append(f"{a['kind']} {a['label'][:40]!r} overlaps "
                                f"{b['kind']} {b['label'][:40]!r}")
    areas = [i for i in items if i["kind"] == "plot area"]
    for a in labels:
        if a["kind"] == "annotation":
            continue  # annotations may point into the plot (a line's label)
        for area in areas:
            if _overlap(a, area):
                problems.append(f"{a['kind']} {a['label'][:40]!r} covers a plot area")
    ticks = [i for i in items if i["kind"] == "tick"]
    for a in labels:
        if a["kind"] not in ("axis title", "title", "legend", "colorbar"):
            continue
        for t in ticks:
            if _overlap(a, t):
                problems.append(f"{a['kind']} {a['label'][:40]!r} overlaps tick label "
                                f"{t['label'][:20]!r}")
                break
    by_axis: dict[str, list[dict[str, Any]]] = {}
    for t in ticks:
        by_axis.setdefault(t.get("axis", ""), []).append(t)
    for axis, group in by_axis.items():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if _ticks_overlap(a, b):
                    problems.append(f"tick labels {a['label'][:20]!r} and {b['label'][:20]!r} "
                                    "overlap (illegible)")
                    break
    fig = fig_boxes["figure"]
    for i in items:
        if i["kind"] in ("plot area",):
            continue
        if not _inside(i, fig):
            problems.append(f"{i['kind']} {i['label'][:40]!r} is clipped (outside the figure)")
    return problems
