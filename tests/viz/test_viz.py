"""redmax.viz: energy plot, single-frame rendering and headless GIF/MP4 animation."""

import shutil
import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure
from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection
from PIL import Image, ImageSequence

import redmax.viz as viz
from redmax import scenes
from redmax.errors import RedmaxError
from redmax.kinematics import forward_kinematics
from redmax.viz.animate import frame_indices
from redmax.viz.plots import _body_geometry, _world_vertices

SCENES = ["reference/-1", "reference/25", "reference/26"]


@pytest.fixture(scope="module")
def runs():
    """(model, result) of each test scene over 0.2 time units (21 samples at dt = 0.01)."""
    out = {}
    for name in SCENES:
        scene = scenes.load(name)
        out[name] = (scene.model, scene.simulate(duration=0.2))
    return out


def _gif_frames(path):
    with Image.open(path) as im:
        return [np.asarray(frame.convert("RGB"), dtype=float) for frame in ImageSequence.Iterator(im)]


def test_importing_viz_does_not_import_matplotlib():
    code = "import sys, redmax, redmax.viz; sys.exit(1 if 'matplotlib' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_plot_energy_writes_a_nonblank_png(runs, tmp_path):
    _, res = runs["reference/-1"]
    path = tmp_path / "energy.png"
    assert viz.plot_energy(res, path) == str(path)
    with Image.open(path) as im:
        assert im.format == "PNG"
        assert im.width > 100 and im.height > 100
        gray = np.asarray(im.convert("L"), dtype=float)
    assert gray.var() > 100.0  # lines, text and legend on a white background
    assert gray.min() < 50.0  # something dark (axes, black total-energy line) was drawn


def test_plot_energy_other_format_and_title(runs, tmp_path):
    _, res = runs["reference/25"]
    path = tmp_path / "energy.svg"
    viz.plot_energy(res, str(path), title="composite pendulum")
    text = path.read_text()
    assert "<svg" in text and "composite pendulum" in text
    labels = ("kinetic", "potential - V(0)", "total - V(0)", "time", "energy")
    assert all(f"<!-- {label} -->" in text for label in labels)


def test_plot_energy_errors(runs, tmp_path):
    _, res = runs["reference/-1"]
    with pytest.raises(RedmaxError, match="kinetic"):
        viz.plot_energy(type(res)(res.t, res.q, res.qdot, res.jstate, {"total": res.energy["total"]}),
                        tmp_path / "e.png")
    with pytest.raises(RedmaxError, match="not_a_format"):
        viz.plot_energy(res, tmp_path / "e.not_a_format")


@pytest.mark.parametrize("n, expected", [(2, [0, 20]), (5, [0, 5, 10, 15, 20]), (21, list(range(21))),
                                         (150, list(range(21)))])
def test_frame_indices_even_in_time_with_both_ends(n, expected):
    assert frame_indices(0.01 * np.arange(21), n).tolist() == expected


def test_frame_indices_irregular_times_stay_distinct():
    t = np.array([0.0, 0.001, 0.002, 0.003, 1.0, 2.0])
    idx = frame_indices(t, 4)
    assert len(idx) == 4 and idx[0] == 0 and idx[-1] == 5 and np.all(np.diff(idx) > 0)


@pytest.mark.parametrize("name", SCENES)
def test_render_frame_draws_every_body(runs, name):
    model, res = runs[name]
    ax = viz.render_frame(model, res.q[-1], res.jstate[-1])
    assert hasattr(ax, "get_zlim3d")
    polys = [c for c in ax.collections if isinstance(c, Poly3DCollection)]
    lines = [c for c in ax.collections if isinstance(c, Line3DCollection)]
    assert len(polys) == model.nb and len(lines) == 3 and len(ax.collections) >= model.nb
    ax.figure.canvas.draw()
    counts = [len(c.get_paths()) for c in polys]
    for i, shape in enumerate(model.shapes):
        if name == "reference/25":  # box (6 faces) + 16-segment cylinder (16 sides, 2 caps)
            assert counts[i] == 6 + 16 + 2
        elif name == "reference/26":
            assert counts[i] == len(shape.faces)
        else:
            assert counts[i] == 6
    # equal aspect: a cube of limits
    spans = [np.ptp(lim) for lim in (ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d())]
    assert np.allclose(spans, spans[0])
    ax2 = viz.render_frame(model, res.q[0], res.jstate[0], frames=False)
    assert len(ax2.collections) == model.nb


def test_render_frame_into_existing_axes_keeps_earlier_drawing(runs):
    model, res = runs["reference/-1"]
    ax = viz.render_frame(model, res.q[0])
    before = np.array([ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d()])
    assert viz.render_frame(model, res.q[-1], ax=ax) is ax
    after = np.array([ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d()])
    assert len(ax.collections) == 2 * (model.nb + 3)
    assert np.all(after[:, 0] <= before[:, 0] + 1e-12) and np.all(after[:, 1] >= before[:, 1] - 1e-12)


def test_render_frame_rejects_bad_input(runs):
    model, _ = runs["reference/-1"]
    with pytest.raises(RedmaxError, match="q must have shape"):
        viz.render_frame(model, np.zeros(model.ndof + 1))
    with pytest.raises(RedmaxError, match="3D axes"):
        viz.render_frame(model, np.zeros(model.ndof), ax=Figure().add_subplot())


def test_composite_geometry_sits_where_the_scene_puts_it(runs):
    """reference/25: box 1 x 1 x 10 hanging down from the joint, cylinder (r 1, h 10) along +x at its foot.

    In the joint frame the drawn vertices must fill [-0.5, 10] x [-1, 1] x [-11, 0], whatever q is.
    """
    model, res = runs["reference/25"]
    geoms = [_body_geometry(model, i) for i in range(model.nb)]
    for k in (0, len(res.t) - 1):
        E_wj, E_wb = forward_kinematics(model, res.q[k], res.jstate[k])
        (Vw,) = _world_vertices(geoms, E_wb)
        E_jw = np.linalg.inv(E_wj[0])
        Vj = Vw @ E_jw[:3, :3].T + E_jw[:3, 3]
        assert np.allclose(Vj.min(axis=0), [-0.5, -1.0, -11.0], atol=1e-9)
        assert np.allclose(Vj.max(axis=0), [10.0, 1.0, 0.0], atol=1e-9)


@pytest.mark.parametrize("name, max_frames", [("reference/-1", 150), ("reference/25", 8), ("reference/26", 21)])
def test_animate_writes_a_gif_with_the_requested_frames(runs, tmp_path, name, max_frames):
    model, res = runs[name]
    path = tmp_path / "motion.gif"
    out = viz.animate(model, res, path, fps=10, max_frames=max_frames)
    expected = min(max_frames, len(res.t))
    assert out == {"path": str(path), "frames": expected, "fps": 10, "contact_points": 0}
    assert path.stat().st_size > 1024
    with Image.open(path) as im:
        assert im.format == "GIF" and im.n_frames == expected
        assert im.width > 100 and im.height > 100
    frames = _gif_frames(path)
    assert len(frames) == expected
    assert frames[0].var() > 100.0
    assert np.abs(frames[0] - frames[-1]).max() > 0  # the bodies and the time label moved


def test_animate_without_triads_and_small_dpi(runs, tmp_path):
    model, res = runs["reference/25"]
    out = viz.animate(model, res, tmp_path / "a.GIF", max_frames=3, frames=False, dpi=40)
    assert out["frames"] == 3
    with Image.open(tmp_path / "a.GIF") as im:
        assert im.n_frames == 3 and im.size == (240, 200)


def test_animate_rejects_unknown_suffix_and_bad_arguments(runs, tmp_path):
    model, res = runs["reference/-1"]
    for bad in ("motion.avi", "motion"):
        with pytest.raises(RedmaxError, match=r"suffix.*\.gif or \.mp4"):
            viz.animate(model, res, tmp_path / bad)
        assert not (tmp_path / bad).exists()
    with pytest.raises(RedmaxError, match="max_frames"):
        viz.animate(model, res, tmp_path / "m.gif", max_frames=1)
    with pytest.raises(RedmaxError, match="fps"):
        viz.animate(model, res, tmp_path / "m.gif", fps=0)
    for view in ((30,), "top", (30, float("inf"))):
        with pytest.raises(RedmaxError, match="view"):
            viz.animate(model, res, tmp_path / "m.gif", view=view)
    other, _ = runs["reference/25"]
    with pytest.raises(RedmaxError, match=r"result\.q"):
        viz.animate(other, res, tmp_path / "m.gif")


def test_animate_mp4_needs_ffmpeg(runs, tmp_path):
    model, res = runs["reference/-1"]
    path = tmp_path / "motion.mp4"
    if shutil.which("ffmpeg") is None:
        with pytest.raises(RedmaxError, match="ffmpeg"):
            viz.animate(model, res, path, max_frames=5)
        assert not path.exists()
    else:
        out = viz.animate(model, res, path, max_frames=5)
        assert out["frames"] == 5 and path.stat().st_size > 0


def test_animate_mp4_error_when_ffmpeg_is_missing(runs, tmp_path, monkeypatch):
    model, res = runs["reference/-1"]
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(RedmaxError, match=r"MP4 needs ffmpeg.*\.gif"):
        viz.animate(model, res, tmp_path / "motion.mp4")


def test_sphere_is_drawn_on_its_surface():
    """A sphere body is drawn as a closed polygon mesh whose vertices lie on the sphere, centred on the body."""
    from redmax import ModelBuilder, Revolute, Sphere
    from redmax.spatial import trans

    b = ModelBuilder("ball on a stick")
    b.add_body("ball", Sphere(0.7), Revolute((0, 1, 0)), body_placement=trans(3, 0, 0), q=[0.4])
    model = b.build()
    ax = viz.render_frame(model, model.q0)
    ax.figure.canvas.draw()
    (poly,) = [c for c in ax.collections if isinstance(c, Poly3DCollection)]
    assert len(poly.get_paths()) >= 64  # a tessellated sphere, not a box
    _, E_wb = forward_kinematics(model, model.q0)
    (V,) = _world_vertices([_body_geometry(model, 0)], E_wb)
    r = np.linalg.norm(V - E_wb[0][:3, 3], axis=1)
    assert np.allclose(r, 0.7, atol=1e-12) and V.shape[0] >= 50


def test_animate_draws_the_friction_contacts(tmp_path):
    """A scene with joint friction: the 8 cylinder points of each of its 2 joints are drawn as magenta dots: the
    frames differ from those drawn without contacts by magenta pixels."""
    scene = scenes.load("reference/27")
    res = scene.simulate(duration=0.05)
    rgb = {}
    for flag in (True, False):
        path = tmp_path / f"c{flag}.gif"
        out = viz.animate(scene.model, res, path, max_frames=2, contacts=flag)
        assert out["contact_points"] == (16 if flag else 0)
        with Image.open(path) as im:
            rgb[flag] = np.asarray(im.convert("RGB"), dtype=float)
    magenta = {k: int((np.abs(v - np.array([255.0, 0.0, 255.0])).max(axis=2) < 60).sum()) for k, v in rgb.items()}
    assert magenta[True] > 30 and magenta[False] == 0
