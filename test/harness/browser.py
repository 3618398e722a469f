"""
Load an HTML page in a real headless browser (Debian's ``chromium``) and report what happened.

The browser is driven over the Chrome DevTools Protocol on a pipe
(``--remote-debugging-pipe``: it reads JSON commands from file descriptor 3 and writes replies
and events to descriptor 4, each message ending in a NUL byte), so no websocket library and no
network port are needed. ``load_page`` opens a ``file://`` page in a fresh profile, waits for
its load event and for the plotly figures to render, and returns a ``PageReport``: JavaScript
exceptions, console and log errors, requests that left the file (a self-contained page makes
none), and per plotly figure its traces, data points and rendered SVG paths. Shared by the bag
and fleet report tests; ``chromium()`` is None where the browser is not installed (skip then).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import select
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ('chromium', 'chromium-browser', 'google-chrome')
SKIP_REASON = ("no chromium on this machine: install Debian's chromium package "
               '(apt-get install chromium; .ci/run does) to run the browser tests')
# Summary of every plotly figure of the page, evaluated in the page once it has rendered.
FIGURES_JS = """JSON.stringify([...document.querySelectorAll('.js-plotly-plot')].map(gd => ({
  id: gd.id,
  traces: (gd._fullData || []).length,
  visible: (gd._fullData || []).filter(t => t.visible === true).length,
  shown: (gd._fullData || []).filter(t => t.visible === true).map(t => t.index),
  points: (gd._fullData || []).filter(t => t.visible === true)
            .reduce((n, t) => n + (t.x ? t.x.length : 0), 0),
  svg: gd.querySelectorAll('.main-svg').length,
  paths: [...gd.querySelectorAll('.scatterlayer path.js-line, .scatterlayer path.js-fill')]
           .filter(p => (p.getAttribute('d') || '').length > 20).length,
  buttons: ((gd.layout.updatemenus || [])[0] || {buttons: []}).buttons.length,
})))"""


def chromium() -> str | None:
    """Path of the chromium executable, or None."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageReport:
    """What loading a page produced (see ``load_page``)."""

    errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    figures: list[dict] = field(default_factory=list)
    after_selection: list[dict] = field(default_factory=list)


class _DevTools:
    """A DevTools Protocol session with a browser started with --remote-debugging-pipe."""

    def __init__(self, executable: str, profile: str):
        self._to_browser_read, self._to_browser = os.pipe()
        self._from_browser, self._from_browser_write = os.pipe()
        read_end, write_end = self._to_browser_read, self._from_browser_write

        def wire_descriptors():  # in the child: its fds 3 and 4 are the pipe ends
            high_read, high_write = os.dup(read_end), os.dup(write_end)
            os.dup2(high_read, 3)
            os.dup2(high_write, 4)

        self.process = subprocess.Popen(
            [executable, '--headless', '--no-sandbox', '--disable-gpu',
             '--remote-debugging-pipe', f'--user-data-dir={profile}', '--no-first-run',
             '--no-default-browser-check', '--disable-background-networking',
             '--disable-component-update', '--disable-sync', '--disable-extensions',
             '--mute-audio', 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # Python's descriptors are close-on-exec: only 3 and 4 reach the browser.
            preexec_fn=wire_descriptors, close_fds=False)
        os.close(read_end)
        os.close(write_end)
        self._buffer = b''
        self._next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30.0) -> dict:
        """Send one command and return its result (RuntimeError on a protocol error)."""
        self._next_id += 1
        message = {'id': self._next_id, 'method': method, 'params': params or {}}
        if session:
            message['sessionId'] = session
        os.write(self._to_browser, json.dumps(message).encode() + b'\0')
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply is None:
                raise TimeoutError(f'no reply to {method} within {timeout} s')
            if reply.get('id') == self._next_id:
                if 'error' in reply:
                    raise RuntimeError(f'{method}: {reply["error"]}')
                return reply.get('result', {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float) -> dict | None:
        """Return the first event ``method`` (received already or within ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if event.get('method') == method:
                    return event
            seen = len(self.events)
            message = self._receive(deadline)
            if message is None:
                return None
            self.events.append(message)

    def _receive(self, deadline: float) -> dict | None:
        while b'\0' not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError('the browser closed its DevTools pipe (crashed?)')
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b'\0', 1)
        return json.loads(message)

    def close(self) -> None:
        try:
            self.send('Browser.close', timeout=5.0)
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)


def load_page(path: Path, *, select_option: int | None = 1, timeout: float = 60.0) -> PageReport:
    """
    Open ``path`` in headless chromium and report errors, outside requests and the figures.

    After the page has rendered, ``select_option`` (when the first figure has a dropdown with
    that many buttons) applies that button the way a click does (``Plotly.update`` with its
    arguments) and the figures are summarized again in ``after_selection``.
    """
    executable = chromium()
    if executable is None:
        raise RuntimeError(SKIP_REASON)
    report = PageReport()
    with tempfile.TemporaryDirectory(prefix='rnea-browser-') as profile:
        tools = _DevTools(executable, profile)
        try:
            target = tools.send('Target.createTarget', {'url': 'about:blank'})['targetId']
            session = tools.send('Target.attachToTarget',
                                 {'targetId': target, 'flatten': True})['sessionId']
            for domain in ('Runtime', 'Log', 'Page', 'Network'):
                tools.send(f'{domain}.enable', session=session)
            tools.send('Page.navigate', {'url': path.resolve().as_uri()}, session=session)
            if tools.wait_event('Page.loadEventFired', timeout) is None:
                report.errors.append(f'the page did not finish loading in {timeout} s')
            report.figures = _rendered(tools, session, timeout)
            if select_option is not None and report.figures \
                    and report.figures[0]['buttons'] > select_option:
                _evaluate(tools, session, f"""(() => {{
                    const gd = document.querySelectorAll('.js-plotly-plot')[0];
                    const args = gd.layout.updatemenus[0].buttons[{select_option}].args;
                    return Plotly.update(gd, args[0], args[1] || {{}}).then(() => 1);
                }})()""", timeout)
                report.after_selection = _rendered(tools, session, timeout)
        finally:
            tools.close()
    for event in tools.events:
        method, params = event.get('method'), event.get('params', {})
        if method == 'Runtime.exceptionThrown':
            details = params.get('exceptionDetails', {})
            report.errors.append('exception: ' + details.get('exception', {}).get(
                'description', details.get('text', '?')))
        elif method == 'Runtime.consoleAPICalled' and params.get('type') == 'error':
            report.errors.append('console.error: ' + ' '.join(
                str(arg.get('value', arg.get('description', ''))) for arg in params['args']))
        elif method == 'Log.entryAdded' and params['entry'].get('level') == 'error':
            report.errors.append(f'log: {params["entry"].get("text")}')
        elif method == 'Network.requestWillBeSent':
            url = params['request']['url']
            if not url.startswith(('file:', 'data:', 'about:', 'blob:')):
                report.external_requests.append(url)
    return report


def _evaluate(tools: _DevTools, session: str, expression: str, timeout: float):
    result = tools.send('Runtime.evaluate', {'expression': expression, 'awaitPromise': True,
                                             'returnByValue': True}, session=session,
                        timeout=timeout)
    if 'exceptionDetails' in result:
        raise RuntimeError(f'evaluation failed: {result["exceptionDetails"]}')
    return result['result'].get('value')


def _rendered(tools: _DevTools, session: str, timeout: float) -> list[dict]:
    """Return the figures once two summaries a moment apart agree (plotly renders late)."""
    deadline = time.monotonic() + timeout
    previous = None
    while time.monotonic() < deadline:
        figures = json.loads(_evaluate(tools, session, FIGURES_JS, timeout))
        if figures and figures == previous and all(f['paths'] for f in figures):
            return figures
        previous = figures
        tools.wait_event('never', 0.25)  # let the page run while events are collected
    return previous or []
