"""The viewer served on localhost (issue 55 item 2): a free port, the URL announced, a page with the bodies in a real
browser (headless Chromium), and nothing left behind when it stops (its port free, its thread gone)."""

import socket
import threading
import time

import numpy as np
import pytest

import redmax as rm
from browser import content as _content
from browser import screenshot as _screenshot
from browser import without_bodies as _without_bodies


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1.0).close()
    except OSError:
        return False
    return True


def test_the_viewer_serves_a_page_with_the_bodies_and_stops_cleanly(tmp_path):
    from redmax.viz.viewer import page, serve

    r = rm.scenes.load("reference/05").simulate()
    urls = []
    th = threading.Thread(target=serve, args=(r.model, r), kwargs={"duration": 12.0, "announce": urls.append},
                          daemon=True)
    th.start()
    for _ in range(100):
        if urls:
            break
        time.sleep(0.1)
    assert len(urls) == 1 and urls[0].startswith("http://127.0.0.1:")
    port = int(urls[0].rstrip("/").rsplit(":", 1)[1])  # the free port the system gave the server
    assert _listening(port)
    shot = _screenshot(urls[0], 0, tmp_path / "live.png")  # chromium reads the page from the server
    blank_html = tmp_path / "page.html"
    page(r.model, r, blank_html)
    blank = _screenshot(_without_bodies(blank_html, tmp_path / "blank.html"), 0, tmp_path / "blank.png")
    assert _content(shot) > _content(blank) + 200  # the bodies (the blank page has the energy plot too)
    th.join(timeout=40)
    assert not th.is_alive() and not _listening(port)  # no thread, no listening socket left


def test_a_busy_port_is_named():
    from redmax.viz.viewer import serve

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = rm.scenes.load("reference/05").simulate(duration=0.1)
        with pytest.raises(rm.RedmaxError, match=f"port {port}"):
            serve(r.model, r, port=port, duration=0.1, announce=lambda u: None)


def test_show_outside_a_notebook_writes_the_page():
    from redmax.viz.viewer import show

    r = rm.scenes.load("reference/05").simulate(duration=0.1)
    path = show(r.model, r)
    text = open(path, encoding="utf-8").read()
    assert "MeshCat" in text and 'id="energy"' in text and np.isfinite(r.H)


def test_redmax_view_serves_until_ctrl_c(tmp_path):
    """``redmax view SCENE``: prints its URL, serves the page, and on Ctrl-C (SIGINT) exits 0 leaving no listener."""
    import re
    import signal
    import subprocess
    import sys

    err = open(tmp_path / "stderr.txt", "w+")  # read back on failure
    # the child gets the default SIGINT disposition (pytest-xdist's workers ignore SIGINT, and an ignored signal
    # stays ignored across exec: Python would then install no KeyboardInterrupt handler)
    proc = subprocess.Popen([sys.executable, "-m", "redmax", "view", "reference/05"],  # a free port of its choice
                            stdout=subprocess.PIPE, stderr=err, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout=300)  # the first run may wait for kernels that another process compiles
    try:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", lines[0] if lines else "")
        assert found, (lines, (tmp_path / "stderr.txt").read_text())
        port = int(found.group(1))
        seen = []
        for attempt in range(3):  # a loaded machine may screenshot before the first frame is drawn: try again
            seen.append(_content(_screenshot(f"http://127.0.0.1:{port}/", 0, tmp_path / f"view{attempt}.png")))
            if seen[-1] > 300:
                break
        assert seen[-1] > 300, seen
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = "killed after 120 s"
        err.close()
    assert code == 0, (code, (tmp_path / "stderr.txt").read_text())
    assert not _listening(port)


def test_command_line_replay_plot_and_focus(tmp_path):
    from redmax.cli import main

    html, gif, png = tmp_path / "r.html", tmp_path / "r.gif", tmp_path / "p.png"
    assert main(["run", "reference/05", "--duration", "0.5", "--quiet", "--html", str(html), "--animate", str(gif),
                 "--focus", "link3"]) == 0
    assert html.stat().st_size > 500_000 and gif.stat().st_size > 0
    assert main(["plot", "reference/04", str(png), "--duration", "0.2", "--what", "reactions"]) == 0
    assert png.stat().st_size > 5000
    assert main(["view", "reference/05", "--duration", "0.2", "--html", str(tmp_path / "v.html")]) == 0
    assert main(["run", "reference/05", "--html", str(tmp_path / "r.htm")]) == 2  # the suffix is checked first
