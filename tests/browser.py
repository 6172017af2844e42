"""The real browser of the viewer tests: headless Chromium from the operating system (installed by .ci/run), software
WebGL; screenshots as arrays, and the pixels that belong to bodies (not collected: no test_ prefix)."""

import json
import shutil
import subprocess

import numpy as np
import pytest


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe is None:
        pytest.fail("headless Chromium is needed (apt-get install chromium; .ci/run installs it)")
    return exe


def screenshot(html, t, out):
    """The page ``html`` (a file or an http URL) at ``#t=t`` as an (h, w, 3) int array, without the player's bar."""
    cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
           "--use-angle=swiftshader", "--window-size=640,480", "--virtual-time-budget=5000",
           f"--screenshot={out}", f"{html}#t={t}" if str(html).startswith("http") else f"file://{html}#t={t}"]
    subprocess.run(cmd, capture_output=True, timeout=120, check=False)
    from PIL import Image

    img = np.asarray(Image.open(out).convert("RGB"), dtype=int)
    return img[:-40]  # the canvas, above the player's bar


def without_bodies(html, out):
    """The same page with no body (the viewer alone): the baseline of :func:`content`."""
    text = html.read_text()
    head, rest = text.split('<script type="application/json" id="redmax-data">', 1)
    data, tail = rest.split("</script>", 1)
    d = json.loads(data)
    d["bodies"], d["poses"] = [], [[] for _ in d["poses"]]
    out.write_text(head + '<script type="application/json" id="redmax-data">' + json.dumps(d) + "</script>" + tail)
    return out


def content(img) -> int:
    """Pixels of a body: neither the sky (blue the largest channel) nor grey or white."""
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    grey = (np.abs(r - g) < 16) & (np.abs(g - b) < 16)
    return int(np.sum(~((b >= r) & (b >= g)) & ~grey))
