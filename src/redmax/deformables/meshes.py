"""Tetrahedral meshes: structured boxes and cylinders, boundary surfaces, and mesh files (via meshio).

A mesh is ``(nodes, tets)``: rest positions (n, 3) float64 and element node indices (m, 4) (``tet4``) or
(m, 10) (``tet10``, node order of :mod:`redmax.deformables.elements`: corners, then the midpoints of the edges
(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)).  Every element is positively oriented:
``det[X_1 - X_0, X_2 - X_0, X_3 - X_0] > 0``.  In the generated tet10 meshes the mid-edge nodes are shared by
the elements of an edge and numbered after all corner nodes; the elements are straight-sided (a cylinder's
boundary edges are chords, not arcs).
"""

from __future__ import annotations

import math
import os

import numpy as np

from redmax._validate import plain
from redmax.deformables.elements import EDGES, ELEMENTS, _check_nodes, _check_tets, _gradients
from redmax.errors import ModelError

__all__ = ["box_mesh", "cylinder_mesh", "read_mesh", "surface_triangles"]

# outward faces of a positively oriented tetrahedron (corners 0..3): face k is opposite corner k
_FACES = np.array([[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]])
# meshio's "tetra10" (VTK's quadratic tetra; meshio turns gmsh's order into it) -> ours: the same order
_MESHIO_TETRA10 = np.arange(10)
# a tet10 with corners 1 and 2 swapped (reorientation): corners, then edges (0,2) (2,1) (0,1) (0,3) (2,3) (1,3)
_FLIP10 = np.array([0, 2, 1, 3, 6, 5, 4, 7, 9, 8])


def _counts(who: str, name: str, values, what: str) -> tuple[int, ...]:
    """Three positive integers, or ModelError naming the argument."""
    try:
        ok = len(values) == 3 and all(int(v) == v and int(v) > 0 for v in values)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ModelError(f"{who}: {name} must be three positive integers ({what}), got {plain(values)!r}")
    return tuple(int(v) for v in values)


def _lengths(who: str, name: str, values, k: int, what: str) -> tuple[float, ...]:
    """``k`` positive finite lengths, or ModelError naming the argument."""
    try:
        out = tuple(float(v) for v in values)
        ok = len(out) == k and all(math.isfinite(v) and v > 0.0 for v in out)
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ModelError(f"{who}: {name} must be {k} positive finite lengths ({what}), got {plain(values)!r}")
    return out


def _element(who: str, element) -> int:
    """Nodes per element of the element name ``element`` ("tet4" or "tet10")."""
    if not isinstance(element, str) or element not in ELEMENTS:
        raise ModelError(f"{who}: element must be one of {sorted(ELEMENTS)}, got {element!r}")
    return ELEMENTS[element]


def _orient(nodes: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """``tets`` (m, 4) with corners 1 and 2 swapped where the orientation is negative."""
    X = nodes[tets]
    det = np.linalg.det(np.stack([X[:, 1] - X[:, 0], X[:, 2] - X[:, 0], X[:, 3] - X[:, 0]], axis=2))
    out = tets.copy()
    neg = det < 0.0
    out[neg, 1], out[neg, 2] = tets[neg, 2], tets[neg, 1]
    return out


def _quadratic(nodes: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """tet10 mesh of a tet4 mesh: one shared node at the midpoint of every edge, numbered after the corners."""
    pairs = np.sort(tets[:, EDGES], axis=2).reshape(-1, 2)  # (6 m, 2), smaller index first
    edges, inverse = np.unique(pairs, axis=0, return_inverse=True)
    mid = 0.5 * (nodes[edges[:, 0]] + nodes[edges[:, 1]])
    tets10 = np.concatenate([tets, nodes.shape[0] + inverse.reshape(-1, 6)], axis=1)
    return np.concatenate([nodes, mid]), tets10


def _finish(who: str, nodes: np.ndarray, tets: np.ndarray, nn: int) -> tuple[np.ndarray, np.ndarray]:
    """Orient the tet4 mesh, add mid-edge nodes for tet10, and check every element (ModelError naming ``who``)."""
    tets = _orient(nodes, tets.astype(np.int64))
    if nn == 10:
        nodes, tets = _quadratic(nodes, tets)
    _gradients(nodes[tets], 0, f"{who}: element")
    return nodes, tets


def box_mesh(size=(1.0, 1.0, 1.0), divisions=(1, 1, 1), element: str = "tet4") -> tuple[np.ndarray, np.ndarray]:
    """Structured tetrahedral mesh of the box ``[-a/2, a/2] x [-b/2, b/2] x [-c/2, c/2]``.

    The box is cut into ``i x j x k`` equal cells; each cell is split into the 6 tetrahedra of the Kuhn
    (Freudenthal) triangulation around its diagonal from the (-, -, -) to the (+, +, +) corner (tetrahedron
    ``v000, v000 + e_p, v000 + e_p + e_q, v111`` for each permutation (p, q, r) of the axes), which is conforming
    across cells.  Node ``(ix, iy, iz)`` of the grid has index ``(ix (j + 1) + iy) (k + 1) + iz``.

    Args:
        size: edge lengths ``(a, b, c)`` along x, y, z (m).
        divisions: cells ``(i, j, k)`` along x, y, z.
        element: "tet4" or "tet10".

    Returns:
        ``(nodes, tets)``: nodes (n, 3) float64, tets (6 i j k, 4 or 10) int64, positively oriented.
    """
    nn = _element("box_mesh", element)
    a, b, c = _lengths("box_mesh", "size", size, 3, "the edge lengths a, b, c")
    i, j, k = _counts("box_mesh", "divisions", divisions, "cells along x, y, z")
    gx, gy, gz = np.meshgrid(np.linspace(-a / 2, a / 2, i + 1), np.linspace(-b / 2, b / 2, j + 1),
                             np.linspace(-c / 2, c / 2, k + 1), indexing="ij")
    nodes = np.stack([gx.ravel(), gy.ravel(), gz.ravel()], axis=1)
    stride = np.array([(j + 1) * (k + 1), k + 1, 1])
    cx, cy, cz = np.meshgrid(np.arange(i), np.arange(j), np.arange(k), indexing="ij")
    base = (np.stack([cx.ravel(), cy.ravel(), cz.ravel()], axis=1) @ stride)[:, None]  # (cells, 1)
    tets = []
    for p, q, r in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
        steps = np.array([0, stride[p], stride[p] + stride[q], stride[p] + stride[q] + stride[r]])
        tets.append(base + steps[None, :])
    return _finish("box_mesh", nodes, np.concatenate(tets), nn)


def cylinder_mesh(radius_height=(1.0, 1.0), divisions=(2, 12, 2), element: str = "tet4"
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Structured tetrahedral mesh of a cylinder along z, centred at the origin (z in [-h/2, h/2]).

    The cross-section is a polar grid: a centre node and ``nr`` rings of ``ntheta`` nodes each at radii
    ``r k / nr`` (k = 1..nr), angles ``2 pi j / ntheta``; the triangles are the ``ntheta`` fan triangles around
    the centre and two triangles per quadrilateral between consecutive rings.  The section is extruded into
    ``nz`` layers of prisms and each prism is cut into 3 tetrahedra by the vertex-index rule (a side face of
    edge (p, q), p < q, is split along the diagonal from q below to p above), which is conforming.  The mesh
    fills the inscribed ``ntheta``-gon prism: its volume is ``pi r^2 h sin(2 pi/ntheta) / (2 pi/ntheta)``.

    Args:
        radius_height: ``(r, h)`` radius and height (m).
        divisions: ``(nr, ntheta, nz)``: rings, nodes per ring (at least 3), layers.
        element: "tet4" or "tet10".

    Returns:
        ``(nodes, tets)``: nodes (n, 3), tets (3 nz ntheta (2 nr - 1), 4 or 10) int64, positively oriented.
    """
    who = "cylinder_mesh"
    nn = _element(who, element)
    r, h = _lengths(who, "radius_height", radius_height, 2, "radius r and height h")
    nr, nt, nz = _counts(who, "divisions", divisions, "rings nr, nodes per ring ntheta, layers nz")
    if nt < 3:
        raise ModelError(f"{who}: divisions ntheta (nodes per ring) must be at least 3, got {nt}")
    theta = 2.0 * math.pi * np.arange(nt) / nt
    rad = r * np.arange(1, nr + 1) / nr
    ring_x = (rad[:, None] * np.cos(theta)[None, :]).ravel()
    ring_y = (rad[:, None] * np.sin(theta)[None, :]).ravel()
    xy = np.concatenate([[[0.0, 0.0]], np.stack([ring_x, ring_y], axis=1)])  # (n2, 2)

    def ring(kk, jj):
        return 1 + (kk - 1) * nt + jj % nt

    jj = np.arange(nt)
    tris = [np.stack([np.zeros(nt, dtype=np.int64), ring(1, jj), ring(1, jj + 1)], axis=1)]
    for kk in range(1, nr):
        tris.append(np.stack([ring(kk, jj), ring(kk + 1, jj), ring(kk + 1, jj + 1)], axis=1))
        tris.append(np.stack([ring(kk, jj), ring(kk + 1, jj + 1), ring(kk, jj + 1)], axis=1))
    tri = np.sort(np.concatenate(tris), axis=1)  # (a, b, c) with a < b < c: the vertex-index rule
    n2 = xy.shape[0]
    z = np.linspace(-h / 2, h / 2, nz + 1)
    nodes = np.concatenate([np.column_stack([xy, np.full(n2, zl)]) for zl in z])
    tets = []
    for layer in range(nz):
        lo = tri + layer * n2
        up = lo + n2
        a, b, c = lo[:, 0], lo[:, 1], lo[:, 2]
        a2, b2, c2 = up[:, 0], up[:, 1], up[:, 2]
        tets += [np.stack(t, axis=1) for t in ((a, b, c, a2), (b, c, a2, b2), (c, a2, b2, c2))]
    return _finish(who, nodes, np.concatenate(tets), nn)


def surface_triangles(tets) -> np.ndarray:
    """Boundary faces of a positively oriented tetrahedral mesh, oriented outward (corner nodes only).

    A face is on the boundary when exactly one element has it.  Each is ordered so that
    ``(X_1 - X_0) x (X_2 - X_0)`` points out of the mesh.

    Args:
        tets: element node indices (m, 4) or (m, 10).

    Returns:
        Boundary triangles (k, 3) int64.
    """
    t = np.asarray(tets)
    if t.ndim != 2 or t.shape[1] not in (4, 10) or not np.issubdtype(t.dtype, np.integer):
        raise ModelError(f"surface_triangles: tets must be an (m, 4) or (m, 10) integer array, got shape {t.shape}")
    faces = t[:, _FACES].reshape(-1, 3).astype(np.int64)
    _, first, counts = np.unique(np.sort(faces, axis=1), axis=0, return_index=True, return_counts=True)
    return faces[np.sort(first[counts == 1])]


def _cells(mesh) -> list[tuple[str, np.ndarray]]:
    """(type, data) of every cell block of a meshio mesh (CellBlock objects or older (type, data) pairs)."""
    out = []
    for block in mesh.cells:
        kind, data = (block.type, block.data) if hasattr(block, "type") else block
        out.append((str(kind), np.asarray(data)))
    return out


def read_mesh(path, element: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Tetrahedral mesh from a file, read with meshio (any format it reads: .msh, .vtk, .vtu, .mesh, ...).

    The file's "tetra" and "tetra10" cells are used (other cells are ignored).  ``element`` chooses the element:
    None keeps the file's ("tet4" for tetra, "tet10" for tetra10); "tet4" keeps the corners of tetra10 cells;
    "tet10" adds shared mid-edge nodes to a file of tetra cells.  Nodes of no element are dropped (the others
    are renumbered in order).  Elements of negative orientation are flipped (corners 1 and 2 swapped).

    Args:
        path: mesh file.
        element: None, "tet4" or "tet10".

    Returns:
        ``(nodes, tets)``: nodes (n, 3) float64 (the file's units), tets (m, 4) or (m, 10) int64.

    Raises:
        ModelError: meshio missing (``pip install redmax[mesh]``), an unreadable file, no tetrahedra, mixed tetra
            and tetra10 cells without ``element="tet4"``, non-finite coordinates, indices out of range, or a
            degenerate element; the message names the file.
    """
    who = f"read_mesh: file {os.fspath(path)!r}"
    if element is not None:
        _element("read_mesh", element)
    try:
        import meshio
    except ImportError:
        raise ModelError("read_mesh: reading mesh files needs meshio: pip install redmax[mesh]") from None
    if not os.path.isfile(path):
        raise ModelError(f"{who}: no such file")
    try:
        mesh = meshio.read(path)
    except Exception as exc:  # meshio raises many types (ReadError, KeyError, ValueError...) for bad files
        raise ModelError(f"{who}: meshio could not read it ({type(exc).__name__}: {exc})") from None
    points = np.asarray(mesh.points, dtype=np.float64)
    if points.ndim != 2 or points.shape[1] != 3:
        raise ModelError(f"{who}: points must be three-dimensional, got shape {points.shape}")
    blocks = _cells(mesh)
    tet4 = [d for kind, d in blocks if kind == "tetra"]
    tet10 = [d[:, _MESHIO_TETRA10] for kind, d in blocks if kind == "tetra10"]
    if not tet4 and not tet10:
        kinds = sorted({kind for kind, _ in blocks})
        raise ModelError(f"{who}: has no tetrahedra (tetra or tetra10 cells); its cells are {kinds}")
    if tet4 and tet10 and element != "tet4":
        raise ModelError(f"{who}: mixes tetra and tetra10 cells; pass element='tet4' to use the corners of both")
    if element == "tet4":  # (the only choice for a file of both)
        tets = np.concatenate([d[:, :4] for d in tet4 + tet10]).astype(np.int64)
    else:
        tets = np.concatenate(tet10 or tet4).astype(np.int64)
    _check_nodes(points, who)
    _check_tets(tets, points.shape[0], who)
    used = np.unique(tets)
    renumber = np.full(points.shape[0], -1, dtype=np.int64)
    renumber[used] = np.arange(used.size)
    nodes = np.ascontiguousarray(points[used])
    tets = renumber[tets]
    X = nodes[tets[:, :4]]
    det = np.linalg.det(np.stack([X[:, 1] - X[:, 0], X[:, 2] - X[:, 0], X[:, 3] - X[:, 0]], axis=2))
    flip = det < 0.0
    if tets.shape[1] == 10:
        tets[flip] = tets[flip][:, _FLIP10]
    else:
        tets[flip] = tets[flip][:, [0, 2, 1, 3]]
    if element == "tet10" and tets.shape[1] == 4:
        nodes, tets = _quadratic(nodes, tets)
    _gradients(nodes[tets], 0, f"{who}: element")
    return nodes, tets
