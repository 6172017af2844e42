"""Energy plots and single-configuration 3D drawings (matplotlib, Agg backend, imported lazily).

Bodies are drawn as flat-shaded polygon collections built once per model in each body's principal
frame *b* and moved rigidly with the body frame ``E_wb`` (4, 4): a shape's own frame sits at
``E_wb inv(E_sb)`` in the world, a composite part at ``E_wb inv(E_sb) E_cp``.  Cylinders and spheres are
coarse polygon meshes (16 segments around); a body built from mass and inertia alone (no shape) is drawn
as the uniform box with the same principal moments.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from redmax.bodies import Composite, Cuboid, Cylinder, Mesh, Sphere
from redmax.errors import RedmaxError
from redmax.kinematics import forward_kinematics
from redmax.viz.geometry import _box, _cylinder, _sphere

__all__ = ["plot_energy", "render_frame"]

COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf")  # body colours, cycled
AXIS_COLORS = ("#e41a1c", "#2ca02c", "#1f50d0")  # joint-frame triads: x red, y green, z blue
LIGHT = np.array([0.3, -0.5, 0.81]) / np.linalg.norm([0.3, -0.5, 0.81])  # world light direction
DEFORMABLE_COLOR = "#17becf"  # strands
SKIN_RGB = (0.93, 0.62, 0.48)  # FEM surfaces
SKIN_ALPHA = 0.4  # see-through, so that the bones inside a skin stay visible
FACE_ALPHA = 0.85  # slightly see-through, so joint triads inside bodies stay visible
TRIAD_FRACTION = 0.1  # triad length as a fraction of the drawing's largest extent


def _mpl() -> SimpleNamespace:
    """Import the few matplotlib pieces the drawings need; RedmaxError when matplotlib is missing."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.colors import to_rgb
        from matplotlib.figure import Figure
        from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection
    except ImportError as exc:
        raise RedmaxError(f"redmax.viz needs matplotlib ({exc}); install it with pip install 'redmax[plot]'") from None
    return SimpleNamespace(FigureCanvasAgg=FigureCanvasAgg, Figure=Figure, to_rgb=to_rgb,
                           Line3DCollection=Line3DCollection, Poly3DCollection=Poly3DCollection)


def _new_figure(mpl, figsize, dpi):
    """A Figure attached to its own Agg canvas (no pyplot)."""
    fig = mpl.Figure(figsize=figsize, dpi=dpi)
    mpl.FigureCanvasAgg(fig)
    return fig


# ------------------------------------------------------------------------------------------------
# Energy plot
# ------------------------------------------------------------------------------------------------


def plot_energy(result, path, title=None, relative: bool = True) -> str:
    """Plot kinetic, potential (= total - kinetic) and total energy against time and save it.

    This is the RedMax paper's Fig. 1b.  Energies are in the result's units (g cm^2/s^2 for the
    reference scenes, which use cm and g).  With ``relative`` (default) the potential is measured from
    its initial value, as the reference implementation reports it, so the total is
    ``H(t) = T(t) + V(t) - V(0)`` and conservation shows as a flat line.

    Args:
        result: a :class:`redmax.Result`; uses ``t`` (N+1,) and ``energy["kinetic"]``, ``energy["total"]``
            (N+1,).
        path: output file; matplotlib infers the format from the suffix (``.png``, ``.pdf``, ``.svg``, ...).
        title: plot title; default ``result.meta.get("scene")`` (no title when that is missing).
        relative: subtract the initial potential energy.

    Returns:
        ``path`` as a string.
    """
    mpl = _mpl()
    path = os.fspath(path)
    t = np.asarray(result.t, dtype=float).reshape(-1)
    energy = getattr(result, "energy", None) or {}
    curves = {}
    for key in ("kinetic", "total"):
        if key not in energy:
            raise RedmaxError(f"plot_energy: result.energy has no {key!r} entry (keys: {sorted(energy)})")
        curves[key] = np.asarray(energy[key], dtype=float).reshape(-1)
        if curves[key].shape != t.shape:
            raise RedmaxError(f"plot_energy: energy[{key!r}] has {curves[key].size} samples, t has {t.size}")
    if title is None:
        title = (getattr(result, "meta", None) or {}).get("scene")

    V = curves["total"] - curves["kinetic"]
    V0 = V[0] if relative else 0.0
    fig = _new_figure(mpl, (6.4, 4.2), 100)
    ax = fig.add_subplot()
    ax.plot(t, curves["kinetic"], label="kinetic", color="#d62728")
    ax.plot(t, V - V0, label="potential - V(0)" if relative else "potential", color="#1f77b4")
    # dashed, so that the kinetic curve shows through when there is no potential energy
    ax.plot(t, curves["total"] - V0, label="total - V(0)" if relative else "total", color="k", linewidth=1.6,
            linestyle="--")
    ax.set_xlabel("time")
    ax.set_ylabel("energy")
    ax.grid(alpha=0.3)
    ax.legend(loc="best")
    if title:
        ax.set_title(str(title))
    fig.tight_layout()
    try:
        fig.savefig(path)
    except ValueError as exc:  # unsupported format
        raise RedmaxError(f"plot_energy: cannot write {path!r}: {exc}") from None
    return path


# ------------------------------------------------------------------------------------------------
# Body geometry (body frame)
# ------------------------------------------------------------------------------------------------


def _shape_polygons(shape, E) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """Parts of ``shape`` as (vertices (n, 3), polygon index groups) in a target frame.

    ``E`` (4, 4) is the shape's own frame expressed in the target frame; composites recurse into their parts.
    """
    if isinstance(shape, Composite):
        out = []
        for part, E_cp in shape.parts:
            out.extend(_shape_polygons(part, E @ np.asarray(E_cp, dtype=float)))
        return out
    if isinstance(shape, Cuboid):
        V, groups = _box(shape.sides)
    elif isinstance(shape, Cylinder):
        V, groups = _cylinder(shape.radius, shape.height)
    elif isinstance(shape, Sphere):
        V, groups = _sphere(shape.radius)
    elif isinstance(shape, Mesh) or (hasattr(shape, "vertices") and hasattr(shape, "faces")):
        V, groups = np.asarray(shape.vertices, dtype=float), [np.asarray(shape.faces, dtype=np.int64)]
    else:
        return []
    return [(V @ E[:3, :3].T + E[:3, 3], groups)]


def _equivalent_box(mass: float, I) -> np.ndarray:
    """Sides (3,) of the uniform box with mass ``mass`` and principal moments ``I`` (3,)."""
    I = np.asarray(I, dtype=float)
    sq = 6.0 * (I.sum() - 2.0 * I) / mass
    return np.sqrt(np.maximum(sq, 1e-6 * max(float(sq.max()), 1e-300)))


@dataclass
class _BodyGeometry:
    """One body's polygons in its principal frame.

    ``V`` (n, 3) vertices; ``groups`` index arrays (m_k, k), one per polygon size k; ``normals`` (m, 3) unit
    polygon normals in group order.
    """

    V: np.ndarray
    groups: list
    normals: np.ndarray


def _body_geometry(model, i: int) -> _BodyGeometry:
    """Polygons of body ``i`` in its principal body frame (all parts merged, grouped by polygon size)."""
    if any(i in d.node_body for d in model.deformables):  # a node: drawn with its strand or skin
        return _BodyGeometry(np.zeros((1, 3)), [], np.zeros((0, 3)))
    mine = [v for v in getattr(model, "visuals", ()) if v.body == model.body_names[i]]
    if mine:  # the visual geometry (shapes, URDF visuals, MJCF geoms), placed in the joint frame
        from redmax.viz.geometry import visual_parts

        parts = visual_parts(mine, np.linalg.inv(np.asarray(model.E_jb[i], dtype=float)))
    else:
        shape = model.shapes[i] if i < len(model.shapes) else None
        parts = [] if shape is None else _shape_polygons(shape, np.linalg.inv(np.asarray(shape.E_sb, dtype=float)))
    if not parts:
        parts = _shape_polygons(Cuboid(*_equivalent_box(float(model.mass[i]), model.I_body[i])), np.eye(4))
    verts, by_size, offset = [], {}, 0
    for V, groups in parts:
        verts.append(V)
        for g in groups:
            by_size.setdefault(g.shape[1], []).append(g + offset)
        offset += len(V)
    V = np.vstack(verts)
    groups = [np.vstack(gs) for gs in by_size.values()]
    normals = []
    for g in groups:
        P = V[g]  # (m, k, 3)
        n = np.cross(P, np.roll(P, -1, axis=1)).sum(axis=1)  # Newell: twice the area vector
        normals.append(n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300))
    return _BodyGeometry(V, groups, np.vstack(normals))


def _world_vertices(geoms, E_wb) -> list[np.ndarray]:
    """Each body's vertices (n_i, 3) in the world for body frames ``E_wb`` (nb, 4, 4)."""
    return [g.V @ E[:3, :3].T + E[:3, 3] for g, E in zip(geoms, E_wb, strict=True)]


def _bounds(points) -> tuple[np.ndarray, np.ndarray]:
    """Component-wise min and max (3,) over a list of (n, 3) point arrays."""
    P = np.vstack([np.asarray(p, dtype=float).reshape(-1, 3) for p in points])
    return P.min(axis=0), P.max(axis=0)


def _set_limits(ax, lo, hi, pad: float) -> None:
    """Equal-aspect cube limits around the box [lo, hi] (3,) with ``pad`` added on every side."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    c = 0.5 * (lo + hi)
    half = 0.5 * float(np.max(hi - lo)) + pad
    if not (np.isfinite(half) and half > 0.0):
        half = 1.0
    ax.set_xlim3d(c[0] - half, c[0] + half)
    ax.set_ylim3d(c[1] - half, c[1] + half)
    ax.set_zlim3d(c[2] - half, c[2] + half)
    ax.set_box_aspect((1.0, 1.0, 1.0))


class _Drawing:
    """The artists of one model in one 3D axes, moved to new frames by :meth:`update`.

    A Poly3DCollection per body and, with ``frames``, three Line3DCollections (x, y, z) holding every
    joint's triad of length ``triad_length``.
    """

    def __init__(self, mpl, model, ax, frames: bool, geoms=None):
        self.model = model
        self.ax = ax
        self.geoms = geoms if geoms is not None else [_body_geometry(model, i) for i in range(model.nb)]
        self.triad_length = 1.0
        self.bodies = []
        nodes = {int(b) for d in model.deformables for b in d.node_body}  # drawn as strands and skins instead
        for i, g in enumerate(self.geoms):
            if i in nodes:
                self.bodies.append((None, None))
                continue
            rgba = next((v.rgba for v in getattr(model, "visuals", ()) if v.body == model.body_names[i] and v.rgba),
                        None)
            rgb = np.array(rgba[:3] if rgba is not None else mpl.to_rgb(COLORS[i % len(COLORS)]), dtype=float)
            meshy = any(v.kind == "mesh" for v in getattr(model, "visuals", ()) if v.body == model.body_names[i])
            col = mpl.Poly3DCollection([g.V[g.groups[0][0]]], linewidths=0.0 if meshy else 0.3,
                                       edgecolors=tuple(0.45 * rgb))
            col.set_label(model.body_names[i])
            ax.add_collection3d(col)
            self.bodies.append((col, rgb))
        self.triads = []
        if frames:
            joints = [i for i in range(model.nb) if i not in nodes]
            self.triad_joints = np.array(joints, dtype=np.int64)
            for c in AXIS_COLORS:
                col = mpl.Line3DCollection([np.zeros((2, 3))], colors=c, linewidths=2.0)
                ax.add_collection3d(col)
                self.triads.append(col)
        world = [v for v in getattr(model, "visuals", ()) if v.body == "world"]
        if world:  # geometry fixed in the world: drawn once, never moved
            from redmax.viz.geometry import visual_parts

            polys = [V[idx] for V, groups in visual_parts(world, np.eye(4)) for grp in groups for idx in grp]
            col = mpl.Poly3DCollection(polys, linewidths=0.2, edgecolors=(0.4, 0.4, 0.4),
                                       facecolors=(0.75, 0.75, 0.75, FACE_ALPHA))
            ax.add_collection3d(col)
        self.deformables = []
        for d in model.deformables:
            if d.kind == "strand":
                col = mpl.Line3DCollection([np.zeros((2, 3))], colors=DEFORMABLE_COLOR, linewidths=2.0)
            else:
                col = mpl.Poly3DCollection([np.zeros((3, 3))], linewidths=0.2, edgecolors=(0.3, 0.3, 0.3))
            col.set_label(d.name)
            ax.add_collection3d(col)
            self.deformables.append((d, col))

    @property
    def artists(self) -> list:
        """Every artist that moves from frame to frame."""
        return [c for c, _ in self.bodies if c is not None] + self.triads + [c for _, c in self.deformables]

    def update(self, E_wj, E_wb, world=None) -> None:
        """Move the artists to joint frames ``E_wj`` and body frames ``E_wb`` (nb, 4, 4).

        ``world`` may give the bodies' world vertices already computed by :func:`_world_vertices`.
        """
        if world is None:
            world = _world_vertices(self.geoms, E_wb)
        for (col, rgb), g, Vw, E in zip(self.bodies, self.geoms, world, E_wb, strict=True):
            if col is None:
                continue
            if len(g.groups) == 1:
                col.set_verts(Vw[g.groups[0]])  # (m, k, 3): one polygon size
            else:
                col.set_verts([P for grp in g.groups for P in Vw[grp]])
            shade = 0.45 + 0.55 * np.abs(g.normals @ (E[:3, :3].T @ LIGHT))
            fc = np.empty((len(shade), 4))
            fc[:, :3] = shade[:, None] * rgb
            fc[:, 3] = FACE_ALPHA
            col.set_facecolor(fc)
        if self.triads:
            Ej = E_wj[self.triad_joints]
            o = Ej[:, :3, 3]
            for axis, col in enumerate(self.triads):
                tip = o + self.triad_length * Ej[:, :3, axis]
                col.set_segments(np.stack([o, tip], axis=1))
        for d, col in self.deformables:
            X = E_wj[d.node_body, :3, 3]  # every node sits at its body's joint-frame origin
            if d.kind == "strand":
                col.set_segments(np.stack([X[d.elements[:, 0]], X[d.elements[:, 1]]], axis=1))
                continue
            T = X[d.surface]  # (k, 3, 3)
            col.set_verts(T)
            n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
            n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
            shade = 0.45 + 0.55 * np.abs(n @ LIGHT)
            fc = np.empty((len(shade), 4))
            fc[:, :3] = shade[:, None] * np.asarray(SKIN_RGB)
            fc[:, 3] = SKIN_ALPHA
            col.set_facecolor(fc)


def _style_axes(ax) -> None:
    """Axis labels and at most about five small ticks per axis on a fresh 3D axes."""
    from matplotlib.ticker import MaxNLocator

    for axis, name in ((ax.xaxis, "x"), (ax.yaxis, "y"), (ax.zaxis, "z")):
        axis.set_major_locator(MaxNLocator(nbins=5))
        axis.set_tick_params(labelsize=8)
        axis.set_label_text(name)


def _check_q(model, q, what: str) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    if q.shape != (model.ndof,):
        raise RedmaxError(f"{what}: q must have shape ({model.ndof},) for model {model.name!r}, got {q.shape}")
    return q


def render_frame(model, q, jstate=None, ax=None, frames=True):
    """Draw the model at coordinates ``q`` into a 3D axes and return the axes.

    Every body becomes one Poly3DCollection (composites: all parts, meshes: their triangles); with
    ``frames`` each joint frame gets a small x/y/z (red/green/blue) triad, three Line3DCollections in all.

    Args:
        model: a compiled :class:`redmax.Model`.
        q: (ndof,) joint coordinates.
        jstate: (nb,) chart words; default the model's initial charts.
        ax: a matplotlib 3D axes (``projection="3d"``) to draw into; ``None`` creates a new Agg figure.
            Limits are set to an equal-aspect cube around the drawing (grown to keep earlier drawings when
            the axes already held collections).
        frames: draw the joint-frame triads.

    Returns:
        The axes (``ax.figure`` is the figure to save).
    """
    mpl = _mpl()
    q = _check_q(model, q, "render_frame")
    if ax is None:
        fig = _new_figure(mpl, (6.0, 6.0), 100)
        ax = fig.add_subplot(projection="3d")
        _style_axes(ax)
    elif not hasattr(ax, "set_zlim3d"):
        raise RedmaxError("render_frame: ax must be a 3D axes (created with projection='3d')")
    had_content = len(ax.collections) > 0
    E_wj, E_wb = forward_kinematics(model, q, jstate)
    drawing = _Drawing(mpl, model, ax, frames)
    world = _world_vertices(drawing.geoms, E_wb)
    lo, hi = _bounds([*world, E_wj[:, :3, 3]])
    drawing.triad_length = TRIAD_FRACTION * max(float(np.max(hi - lo)), 1e-12)
    drawing.update(E_wj, E_wb, world)
    if had_content:
        old = np.array([ax.get_xlim3d(), ax.get_ylim3d(), ax.get_zlim3d()])
        lo, hi = np.minimum(lo, old[:, 0]), np.maximum(hi, old[:, 1])
        _set_limits(ax, lo, hi, 0.0)
    else:
        _set_limits(ax, lo, hi, drawing.triad_length)
    return ax
