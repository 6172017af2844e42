"""Drawings use the visual geometry (issue 55 item 5): robot meshes read with trimesh, primitives, colours; the
camera can frame one body (``focus``)."""

import numpy as np
import pytest

import redmax as rm


def _faces(ax):
    """Polygons drawn (one face colour each: the drawing shades every polygon)."""
    return sum(len(c.get_facecolor()) for c in ax.collections)


def test_a_robot_is_drawn_with_its_meshes():
    import matplotlib

    matplotlib.use("Agg")
    from redmax.viz.geometry import MAX_FACES
    from redmax.viz.plots import _body_geometry, render_frame

    m = rm.load_robot("panda")
    g = _body_geometry(m, 1)  # panda_link1: its decimated visual mesh, not the inertia box
    assert 100 < g.groups[0].shape[0] <= MAX_FACES and g.groups[0].shape[1] == 3
    ax = render_frame(m, m.q0, frames=False)
    assert _faces(ax) > 5000  # every link's mesh (the inertia boxes would be 6 quads each)
    colours = {tuple(np.round(c.get_facecolor()[0][:3], 3)) for c in ax.collections if len(c.get_facecolor())}
    assert len(colours) > 3


def test_primitives_and_the_shape_fallback():
    from redmax.viz.plots import _body_geometry

    m = rm.scenes.load("reference/25").model  # a box and a cylinder
    g = _body_geometry(m, 0)
    assert sum(grp.shape[0] for grp in g.groups) == 6 + 16 + 2
    b = rm.ModelBuilder("bare", (0, 0, -9.81))
    b.add_body("b", None, rm.Revolute((0, 1, 0)), mass=1.0, inertia=(1.0, 1.0, 1.0))
    assert not b.build().visuals and _body_geometry(b.build(), 0).groups[0].shape == (6, 4)  # the inertia box


def test_focus_frames_one_body(tmp_path):
    from redmax.viz import animate

    sc = rm.scenes.load("reference/05")
    r = sc.simulate(duration=0.2)
    out = animate(sc.model, r, tmp_path / "focus.gif", max_frames=3, focus="link3")
    assert out["frames"] == 3 and (tmp_path / "focus.gif").stat().st_size > 0
    with pytest.raises(rm.RedmaxError, match="no body named 'hand'"):
        animate(sc.model, r, tmp_path / "x.gif", max_frames=2, focus="hand")
