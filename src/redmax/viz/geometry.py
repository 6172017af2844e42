"""Polygons of visual geometry (``model.visuals``, :mod:`redmax.model.visuals`) for the matplotlib drawings.

Primitives become coarse polygon meshes; mesh files are read with trimesh (STL, OBJ; DAE with pycollada: the
``viz`` extra) and reduced to at most :data:`MAX_FACES` triangles by quadric decimation (fast-simplification),
so that a robot's meshes stay drawable by matplotlib.  A file that cannot be read is reported once and drawn as
nothing (the body then falls back to its inertia box when it has no other visual).
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from redmax.errors import RedmaxWarning

__all__ = ["MAX_FACES", "mesh_arrays", "visual_parts"]

MAX_FACES = 1500  # triangles per mesh in a matplotlib drawing
SEGMENTS = 16  # polygon segments around cylinders and spheres
LATITUDES = 8  # latitude bands of a sphere


def _box(sides) -> tuple[np.ndarray, list[np.ndarray]]:
    """Vertices (8, 3) and quads (6, 4) of a box with ``sides`` (3,) centred at the origin."""
    bits = np.array([[i & 1, (i >> 1) & 1, (i >> 2) & 1] for i in range(8)], dtype=float)
    V = (bits - 0.5) * np.asarray(sides, dtype=float)
    quads = np.array([[0, 2, 6, 4], [1, 5, 7, 3], [0, 4, 5, 1], [2, 3, 7, 6], [0, 1, 3, 2], [4, 6, 7, 5]])
    return V, [quads]


def _cylinder(radius: float, height: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """Cylinder along z centred at the origin: 16 side quads and two 16-gon caps."""
    a = 2.0 * np.pi * np.arange(SEGMENTS) / SEGMENTS
    ring = np.column_stack([radius * np.cos(a), radius * np.sin(a)])
    V = np.vstack([np.column_stack([ring, np.full(SEGMENTS, -0.5 * height)]),
                   np.column_stack([ring, np.full(SEGMENTS, 0.5 * height)])])
    k = np.arange(SEGMENTS)
    k1 = (k + 1) % SEGMENTS
    sides = np.column_stack([k, k1, k1 + SEGMENTS, k + SEGMENTS])
    caps = np.vstack([k[::-1], k + SEGMENTS])
    return V, [sides, caps]


def _sphere(radius: float) -> tuple[np.ndarray, list[np.ndarray]]:
    """UV sphere centred at the origin: 8 latitude bands of 16 quads (degenerate at the poles)."""
    th = np.pi * np.arange(LATITUDES + 1) / LATITUDES
    ph = 2.0 * np.pi * np.arange(SEGMENTS) / SEGMENTS
    T, P = np.meshgrid(th, ph, indexing="ij")
    V = radius * np.stack([np.sin(T) * np.cos(P), np.sin(T) * np.sin(P), np.cos(T)], axis=-1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(LATITUDES), np.arange(SEGMENTS), indexing="ij")
    i, j = i.ravel(), j.ravel()
    j1 = (j + 1) % SEGMENTS
    quads = np.column_stack([i * SEGMENTS + j, (i + 1) * SEGMENTS + j, (i + 1) * SEGMENTS + j1, i * SEGMENTS + j1])
    return V, [quads]


@functools.lru_cache(maxsize=256)
def _read(path: str, scale: tuple) -> tuple[np.ndarray, np.ndarray] | None:
    try:
        import trimesh
    except ImportError:
        warnings.warn(f"{path}: drawing mesh files needs trimesh (pip install redmax[viz]); drawn without it",
                      RedmaxWarning, stacklevel=4)
        return None
    try:
        m = trimesh.load(path, force="mesh")
    except Exception as e:  # any reader error: the drawing goes on without this mesh
        warnings.warn(f"{path}: cannot read the mesh ({type(e).__name__}: {e}); drawn without it", RedmaxWarning,
                      stacklevel=4)
        return None
    if len(m.faces) > MAX_FACES:
        m.merge_vertices()  # files (DAE) often repeat a vertex per face: decimation needs the shared ones
        try:
            m = m.simplify_quadric_decimation(face_count=MAX_FACES)
        except Exception:  # no decimation library: keep every k-th triangle
            m = trimesh.Trimesh(m.vertices, m.faces[:: int(np.ceil(len(m.faces) / MAX_FACES))], process=False)
    V = np.asarray(m.vertices, dtype=float) * np.asarray(scale, dtype=float)
    return V, np.asarray(m.faces, dtype=np.int64)


def mesh_arrays(v) -> tuple[np.ndarray, np.ndarray] | None:
    """(vertices (n, 3) in the visual's frame, triangles (m, 3)) of a mesh visual, or None."""
    if v.vertices is not None and v.faces is not None:
        F = np.asarray(v.faces, dtype=np.int64)
        if len(F) > MAX_FACES:
            F = F[:: int(np.ceil(len(F) / MAX_FACES))]
        return np.asarray(v.vertices, dtype=float), F
    if v.file is None:
        return None
    return _read(str(v.file), tuple(float(s) for s in v.scale))


def visual_parts(visuals, E) -> list[tuple[np.ndarray, list[np.ndarray]]]:
    """Parts (vertices (n, 3), polygon index groups) of ``visuals`` in a target frame; ``E`` (4, 4) is the frame the
    visuals' placements are given in (the body's joint frame), expressed in the target frame."""
    out = []
    for v in visuals:
        P = np.asarray(E, dtype=float) @ np.asarray(v.placement, dtype=float)
        pieces = []
        if v.kind == "box":
            pieces.append(_box(v.size))
        elif v.kind == "cylinder":
            pieces.append(_cylinder(*v.size))
        elif v.kind == "sphere":
            pieces.append(_sphere(v.size[0]))
        elif v.kind == "capsule":
            r, length = v.size
            pieces.append(_cylinder(r, length))
            for z in (-0.5 * length, 0.5 * length):
                V, groups = _sphere(r)
                pieces.append((V + np.array([0.0, 0.0, z]), groups))
        elif v.kind == "mesh":
            arrays = mesh_arrays(v)
            if arrays is not None:
                pieces.append((arrays[0], [arrays[1]]))
        for V, groups in pieces:
            out.append((V @ P[:3, :3].T + P[:3, 3], groups))
    return out
