"""Headless animation of a simulated trajectory: GIF through Pillow, MP4 through ffmpeg.

One Agg figure is built once; per frame only the body polygons, their shading, the joint triads and the
time label change before the writer grabs the frame.  The axis limits are fixed for the whole motion
(an equal-aspect cube around every body vertex at every drawn frame).
"""

from __future__ import annotations

import math
import os
import shutil

import numpy as np

from redmax.errors import RedmaxError
from redmax.kinematics import forward_kinematics
from redmax.viz.plots import (
    TRIAD_FRACTION,
    _body_geometry,
    _bounds,
    _Drawing,
    _mpl,
    _new_figure,
    _set_limits,
    _style_axes,
    _world_vertices,
)

__all__ = ["animate", "frame_indices"]

FIGSIZE = (6.0, 5.0)  # inches; the frame is FIGSIZE * dpi pixels
AXES_RECT = (0.04, 0.07, 0.92, 0.85)  # the 3D axes in figure coordinates, room for tick labels and the title


def frame_indices(t, max_frames: int) -> np.ndarray:
    """Indices of at most ``max_frames`` samples of ``t`` (N+1,), evenly spread in time.

    The first and last samples are always included; each target time ``linspace(t[0], t[-1], n)`` takes
    its nearest sample (``n = min(max_frames, N+1)``), falling back to evenly spread indices if two
    targets would share a sample (irregular sampling).
    """
    t = np.asarray(t, dtype=float).reshape(-1)
    count = t.size
    n = min(int(max_frames), count)
    if n <= 1:
        return np.zeros(min(count, 1), dtype=np.int64)
    last = count - 1
    idx = None
    if np.all(np.diff(t) > 0.0):
        target = np.linspace(t[0], t[-1], n)
        k = np.clip(np.searchsorted(t, target), 1, last)
        idx = np.where(target - t[k - 1] <= t[k] - target, k - 1, k)
        idx[0], idx[-1] = 0, last
        if not np.all(np.diff(idx) > 0):
            idx = None
    if idx is None:
        idx = np.floor(np.linspace(0.0, last, n) + 0.5).astype(np.int64)
    return idx.astype(np.int64)


def _time_format(t_frames: np.ndarray) -> str:
    """A fixed-point format with enough decimals to tell the drawn times apart (2 to 6)."""
    gaps = np.diff(t_frames)
    gaps = gaps[gaps > 0.0]
    digits = 2 if gaps.size == 0 else min(max(math.ceil(-math.log10(float(gaps.min()))), 2), 6)
    return f"{{:.{digits}f}}"


def _freeze_background(fig, ax, moving, static) -> bool:
    """Pre-render the static part of the figure once, so each frame only redraws the ``moving`` artists.

    Everything that never changes (panes, grid, ticks, labels, ``static`` texts) is drawn once and pasted
    back as pixels.  Returns whether it did.

    Call after the writer's setup (which may resize the figure).  The 3D projection depends only on the
    limits and the view, so hiding the axis decorations afterwards leaves the moving artists in place.
    The pasted background is checked pixel for pixel against a full drawing; on any difference
    everything is put back and the frames are drawn in full.
    """
    from matplotlib.artist import Artist

    class _Background(Artist):
        """Pre-rendered pixels (h, w, 4) pasted at the figure's lower-left corner, without resampling."""

        def __init__(self, pixels):
            super().__init__()
            self.pixels = pixels
            self.set_zorder(-10)

        def draw(self, renderer):
            if self.pixels.shape[:2] != (int(renderer.height), int(renderer.width)):
                raise RedmaxError("animate: the figure changed size after its background was rendered")
            gc = renderer.new_gc()
            renderer.draw_image(gc, 0, 0, self.pixels)
            gc.restore()

    for a in moving:
        a.set_visible(False)
    fig.canvas.draw()
    background = np.array(fig.canvas.buffer_rgba())  # (h, w, 4) uint8, top row first
    ax.set_axis_off()
    ax.patch.set_visible(False)
    for a in static:
        a.set_visible(False)
    done = False
    for pixels in (np.ascontiguousarray(background[::-1]), background):  # Agg wants the bottom row first
        art = fig.add_artist(_Background(pixels))
        fig.canvas.draw()
        if np.array_equal(np.asarray(fig.canvas.buffer_rgba()), background):
            done = True
            break
        art.remove()
    if not done:
        ax.set_axis_on()
        ax.patch.set_visible(True)
        for a in static:
            a.set_visible(True)
    for a in moving:
        a.set_visible(True)
    return done


CONTACT_COLOR = "#ff00ff"  # the friction contacts' dots (a colour no body or triad uses)


def contact_points(model) -> list:
    """``[(body, points (k, 3) in its joint frame), ...]``: the friction contacts of the joints and loop closures
    of ``model`` (:mod:`redmax.friction`), empty without any."""
    from redmax.friction.setup import friction_setup, has_friction

    if not has_friction(model):
        return []
    try:
        setup = friction_setup(model.coordinate_model)
    except RedmaxError:
        return []
    return [(jc.joint, jc.cs.points) for jc in setup.joints] + [(lc.A, lc.cs.points) for lc in setup.loops]


def _contact_world(cpts, E_wj) -> np.ndarray:
    if not cpts:
        return np.zeros((0, 3))
    return np.concatenate([P @ E_wj[i, :3, :3].T + E_wj[i, :3, 3] for i, P in cpts])


def animate(model, result, path, fps=25, max_frames=150, frames=True, dpi=80, *, cache_background=True,
            view=None, contacts=True, focus=None) -> dict:
    """Write an animation of ``result`` (bodies, joint-frame triads, strands and FEM surfaces of deformable bodies,
    friction contacts, time label) to a GIF or MP4 file.

    Args:
        model: the :class:`redmax.Model` that produced ``result``.
        result: a :class:`redmax.Result`: ``t`` (N+1,), ``q`` (N+1, ndof), ``jstate`` (N+1, nb).
        path: output file; ``.gif`` is written with matplotlib's PillowWriter, ``.mp4`` with its
            FFMpegWriter (needs the ``ffmpeg`` executable on PATH).
        fps: frames per second of the file (> 0).
        max_frames: at most this many frames (>= 2), evenly spread in time, first and last sample included.
        frames: draw an x/y/z (red/green/blue) triad at every joint frame.
        dpi: resolution; frames are 6 x 5 inches, i.e. 480 x 400 pixels at the default 80.
        cache_background: draw the static axes decorations once and reuse them in every frame (about
            three times faster; the frames are the same as with ``False``).
        view: ``(elevation, azimuth)`` of the camera in degrees (matplotlib's ``view_init``); default
            matplotlib's (30, -60).
        contacts: draw the contact points of joints and loops with friction (orange dots; ``redmax.friction``).
        focus: a body name: the camera frames that body over the whole motion (with a margin of half its extent)
            instead of the whole model.

    Returns:
        ``{"path": path, "frames": number of frames written, "fps": fps, "contact_points": dots per frame}``.

    Raises:
        RedmaxError: unknown suffix, MP4 without ffmpeg, matplotlib missing, or mismatched result arrays.
    """
    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".gif", ".mp4"):
        raise RedmaxError(f"animate: cannot write {path!r}: unknown suffix {suffix or '(none)'!r}; use .gif or .mp4")
    if suffix == ".mp4" and shutil.which("ffmpeg") is None:
        raise RedmaxError(f"animate: cannot write {path!r}: MP4 needs ffmpeg; install it or write a .gif")
    if not (isinstance(fps, int | float) and math.isfinite(fps) and fps > 0):
        raise RedmaxError(f"animate: fps must be a positive number, got {fps!r}")
    if isinstance(max_frames, bool) or not isinstance(max_frames, int | np.integer) or max_frames < 2:
        raise RedmaxError(f"animate: max_frames must be an integer >= 2, got {max_frames!r}")
    if not (isinstance(dpi, int | float) and math.isfinite(dpi) and dpi > 0):
        raise RedmaxError(f"animate: dpi must be a positive number, got {dpi!r}")
    if view is not None:
        try:
            elev, azim = (float(v) for v in view)
        except (TypeError, ValueError):
            raise RedmaxError(f"animate: view must be (elevation, azimuth) in degrees, got {view!r}") from None
        if not (math.isfinite(elev) and math.isfinite(azim)):
            raise RedmaxError(f"animate: view must be finite, got {view!r}")

    t = np.asarray(result.t, dtype=float).reshape(-1)
    q = np.asarray(result.q, dtype=float)
    if t.size == 0 or q.shape != (t.size, model.ndof):
        raise RedmaxError(f"animate: result.q must have shape ({t.size}, {model.ndof}) for model {model.name!r}, "
                          f"got {q.shape}")
    js = getattr(result, "jstate", None)
    if js is not None:
        js = np.asarray(js)
        if js.shape != (t.size, model.nb):
            raise RedmaxError(f"animate: result.jstate must have shape ({t.size}, {model.nb}), got {js.shape}")

    mpl = _mpl()
    if suffix == ".gif":
        from matplotlib.animation import PillowWriter

        writer = PillowWriter(fps=fps)
    else:
        from matplotlib.animation import FFMpegWriter

        writer = FFMpegWriter(fps=fps)

    idx = frame_indices(t, max_frames)
    poses = [forward_kinematics(model, q[k], None if js is None else js[k]) for k in idx]
    geoms = [_body_geometry(model, i) for i in range(model.nb)]
    worlds = [_world_vertices(geoms, E_wb) for _, E_wb in poses]
    if focus is not None:
        if focus not in model.body_names:
            raise RedmaxError(f"animate: focus: no body named {focus!r} in model {model.name!r}")
        i = model.body_names.index(focus)
        lo, hi = _bounds([world[i] for world in worlds] + [E_wj[i:i + 1, :3, 3] for E_wj, _ in poses])
        half = 0.5 * max(float(np.max(hi - lo)), 1e-9)
        lo, hi = lo - half, hi + half
    else:
        lo, hi = _bounds([P for world in worlds for P in world] + [E_wj[:, :3, 3] for E_wj, _ in poses])

    fig = _new_figure(mpl, FIGSIZE, dpi)
    ax = fig.add_axes(AXES_RECT, projection="3d")
    _style_axes(ax)
    if view is not None:
        ax.view_init(elev=elev, azim=azim)
    drawing = _Drawing(mpl, model, ax, frames, geoms)
    cpts = contact_points(model) if contacts else []
    dots = None
    if cpts:
        (dots,) = ax.plot([], [], [], linestyle="none", marker="o", markersize=4, color=CONTACT_COLOR)
    drawing.triad_length = TRIAD_FRACTION * max(float(np.max(hi - lo)), 1e-12)
    _set_limits(ax, lo, hi, drawing.triad_length)
    name = (getattr(result, "meta", None) or {}).get("scene") or model.name
    title = fig.text(0.5, 0.965, str(name), ha="center", va="center", fontsize=11)
    label = fig.text(0.02, 0.965, "", ha="left", va="center", fontsize=9, family="monospace")
    fmt = _time_format(t[idx])
    n = len(idx)

    with writer.saving(fig, path, dpi):
        if cache_background:
            moving = [*drawing.artists, label, *([dots] if dots is not None else [])]
            _freeze_background(fig, ax, moving, [title])
        for j, k in enumerate(idx):
            E_wj, E_wb = poses[j]
            drawing.update(E_wj, E_wb, worlds[j])
            if dots is not None:
                P = _contact_world(cpts, E_wj)
                dots.set_data_3d(P[:, 0], P[:, 1], P[:, 2])
            # the frame counter keeps consecutive frames distinct (Pillow merges identical GIF frames)
            label.set_text(f"t = {fmt.format(t[k])}  [{j + 1}/{n}]")
            writer.grab_frame()
    return {"path": path, "frames": n, "fps": fps, "contact_points": int(sum(P.shape[0] for _, P in cpts))}
