"""Self-contained HTML replays (issue 55 item 3), checked in a real browser: headless Chromium (installed by .ci/run)
with software WebGL screenshots the replay at ``#t=0`` and at ``#t=<end>``; the canvas must show bodies (pixels
that are not the viewer's blue sky, its grey grid or white) and the two instants must differ."""

import numpy as np
import pytest

import redmax as rm
from browser import content as _content
from browser import screenshot as _screenshot
from browser import without_bodies as _without_bodies


@pytest.mark.parametrize("which", ["reference/05", "panda"])
def test_replay_plays_in_a_browser(tmp_path, which):
    if which == "panda":
        if not rm.available_robots():
            pytest.fail("example-robot-data (a test extra) is needed")
        model = rm.load_robot("panda")
        result = rm.simulate(model, integrator="euler", dt=1e-3, duration=1.0)
    else:
        result = rm.scenes.load(which).simulate()
        model = result.model
    html = tmp_path / "replay.html"
    info = result.to_html(html, max_frames=100)
    text = html.read_text()
    assert info["frames"] == 100 and "http" not in text.split("<script>")[0]  # nothing fetched: no URL in the head
    assert "MeshCat" in text and info["bytes"] == len(text.encode())
    first = _screenshot(html, 0, tmp_path / "first.png")
    last = _screenshot(html, float(result.t[-1]), tmp_path / "last.png")
    blank = _screenshot(_without_bodies(html, tmp_path / "blank.html"), 0, tmp_path / "blank.png")
    floor = _content(blank)  # the viewer's own coloured pixels (its axes)
    assert _content(first) > 2 * floor + 100 and _content(last) > 2 * floor + 100
    assert np.abs(first - last).sum(axis=-1).astype(bool).sum() > 200  # the motion shows
    if which == "reference/05":  # the joint frames and names on demand (#t=...&frames&names)
        marked = _screenshot(html, "0&frames&names", tmp_path / "marked.png")
        assert np.abs(marked - first).sum(axis=-1).astype(bool).sum() > 100


def test_replay_errors_name_the_problem(tmp_path):
    r = rm.scenes.load("reference/05").simulate(duration=0.1)
    with pytest.raises(rm.RedmaxError, match="max_frames"):
        r.to_html(tmp_path / "x.html", max_frames=1)
    r.model = None
    with pytest.raises(rm.RedmaxError, match="pass model="):
        r.to_html(tmp_path / "x.html")
