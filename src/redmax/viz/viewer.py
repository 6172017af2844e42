"""The viewer in the browser: :func:`show` (a notebook or a local page) and :func:`serve` (``redmax view``).

Both show the HTML replay of :mod:`redmax.viz.html` (meshcat's three.js viewer with the bodies' meshes, a time
slider, play/pause and speed) with, beside it, the energy plot of the result.  meshcat is used for its viewer
bundle, which runs with no server and no network (the same page serves as a file, in a notebook and from
:func:`serve`); the Python side needs no running meshcat server.  :func:`serve` answers on localhost on a free port
(or ``port``), prints the URL and stops cleanly on Ctrl-C (or after ``duration`` seconds), closing its socket.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import socket
import tempfile
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

from redmax.errors import RedmaxError

__all__ = ["page", "serve", "show"]


def _energy_png(result) -> bytes | None:
    """The energy plot of ``result`` as PNG bytes (None when it has no energies)."""
    from redmax.viz.plots import plot_energy

    if not getattr(result, "energy", None):
        return None
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "energy.png")
        plot_energy(result, path)
        with open(path, "rb") as fh:
            buf.write(fh.read())
    return buf.getvalue()


def page(model, result, path, *, max_frames: int = 600) -> dict:
    """Write the viewer page: the HTML replay with the energy plot in a side panel.  Returns replay_html's dict."""
    from redmax.viz.html import replay_html

    info = replay_html(model, result, path, max_frames=max_frames)
    png = _energy_png(result)
    if png is not None:
        side = ('<img id="energy" alt="energy" style="position:absolute;top:28px;left:8px;width:320px;'
                'background:white;border:1px solid #ccc" src="data:image/png;base64,'
                + base64.b64encode(png).decode("ascii") + '">')
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        text = text.replace('<div id="bar">', side + '<div id="bar">', 1)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        info["bytes"] = len(text.encode("utf-8"))
    return info


def show(model, result, *, max_frames: int = 600, height: int = 500):
    """Show the viewer in a Jupyter notebook (an inline frame holding the page); outside a notebook, write the page
    to a temporary file and return its path."""
    with tempfile.NamedTemporaryFile("w", suffix=".html", delete=False) as fh:
        path = fh.name
    page(model, result, path, max_frames=max_frames)
    try:
        from IPython import get_ipython
        from IPython.display import HTML
    except ImportError:
        return path
    if get_ipython() is None:
        return path
    with open(path, encoding="utf-8") as fh:
        doc = fh.read()
    srcdoc = doc.replace("&", "&amp;").replace('"', "&quot;")
    return HTML(f'<iframe srcdoc="{srcdoc}" style="width:100%;height:{int(height)}px;border:0"></iframe>')


def free_port() -> int:
    """A TCP port that is free on localhost now."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(model, result, *, port: int | None = None, duration: float | None = None, announce=print,
          max_frames: int = 600) -> str:
    """Serve the viewer page on ``http://127.0.0.1:PORT/`` until Ctrl-C (or for ``duration`` seconds).

    Args:
        port: the port (default a free one).  duration: stop after this many seconds (tests); None: until Ctrl-C.
        announce: called with the URL once the server listens (default ``print``).
    Returns:
        The URL it served.
    """
    if port is not None and (isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536):
        raise RedmaxError(f"view: port must be an integer in 1..65535, got {port!r}")
    with tempfile.TemporaryDirectory(prefix="redmax-view-") as d:
        page(model, result, os.path.join(d, "index.html"), max_frames=max_frames)

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args, **kw):
                super().__init__(*args, directory=d, **kw)

            def log_message(self, *args):  # quiet: the URL is the only output
                pass

        try:  # port 0: the system picks a free port as it binds (no race with other programs)
            server = ThreadingHTTPServer(("127.0.0.1", 0 if port is None else port), Handler)
        except OSError as e:
            raise RedmaxError(f"view: cannot listen on port {port}: {e.strerror}") from None
        server.daemon_threads = True  # an open browser connection never holds the stop
        server.block_on_close = False
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        announce(url)
        timer = None
        if duration is not None:
            timer = threading.Timer(float(duration), server.shutdown)
            timer.daemon = True
            timer.start()
        try:
            server.serve_forever(poll_interval=0.2)
        except KeyboardInterrupt:
            pass
        finally:
            if timer is not None:
                timer.cancel()
            server.server_close()
    return url
