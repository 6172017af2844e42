"""Tests of redmax.bodies: analytic shapes, composites, and Mirtich mesh integration."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from redmax import spatial
from redmax.bodies import Composite, Cuboid, Cylinder, Mesh, Shape, Sphere
from redmax.errors import ModelError

from paths import DATA

CUBOID_OBJ = DATA / "cuboid.obj"
GEARS_OBJ = DATA / "gears.obj"


def rel(a, b):
    """Largest absolute difference relative to the largest magnitude of b."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / np.abs(b).max())


def inertia_tensor(shape: Shape) -> np.ndarray:
    """3x3 inertia tensor about the centre of mass, in the axes of the shape frame."""
    R = shape.E_sb[:3, :3]
    return R @ np.diag(shape.I) @ R.T


def box_mesh(sx, sy, sz, centre=(0.0, 0.0, 0.0)):
    """Closed, outward-oriented 12-triangle box; corner k has (x, y, z) bits (k & 1, k & 2, k & 4)."""
    bits = np.array([[(k >> 0) & 1, (k >> 1) & 1, (k >> 2) & 1] for k in range(8)], dtype=float)
    V = (bits - 0.5) * np.array([sx, sy, sz]) + np.asarray(centre)
    F = np.array([
        [0, 2, 3], [0, 3, 1],  # -z
        [4, 5, 7], [4, 7, 6],  # +z
        [0, 1, 5], [0, 5, 4],  # -y
        [2, 6, 7], [2, 7, 3],  # +y
        [0, 4, 6], [0, 6, 2],  # -x
        [1, 3, 7], [1, 7, 5],  # +x
    ])
    return V, F


def load_obj_plain(path):
    """Minimal OBJ reader for the reference files (triangles, 'i//n' entries)."""
    V, F = [], []
    for line in Path(path).read_text().splitlines():
        t = line.split()
        if t and t[0] == "v":
            V.append([float(x) for x in t[1:4]])
        elif t and t[0] == "f":
            F.append([int(x.split("/")[0]) - 1 for x in t[1:]])
    return np.array(V), np.array(F)


def tetra_mass_properties(V, F, rho=1.0):
    """Independent check: signed tetrahedra (origin, p0, p1, p2) per face.

    Volume det/6; first moment det/24 (p0 + p1 + p2); second moment (covariance about the origin)
    det/120 (sum p_i p_i^T + s s^T) with s = p0 + p1 + p2.  Returns mass, centre, inertia tensor at centre.
    """
    p0, p1, p2 = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    d = np.einsum("ij,ij->i", p0, np.cross(p1, p2))
    vol = d.sum() / 6.0
    s = p0 + p1 + p2
    first = (d[:, None] * s).sum(axis=0) / 24.0
    cov = np.einsum("i,ij,ik->jk", d, s, s)
    for p in (p0, p1, p2):
        cov += np.einsum("i,ij,ik->jk", d, p, p)
    cov /= 120.0
    m = rho * vol
    c = first / vol
    J_o = rho * (np.trace(cov) * np.eye(3) - cov)
    J_c = J_o - m * (c @ c * np.eye(3) - np.outer(c, c))
    return m, c, J_c


def random_rotation(seed):
    rng = np.random.default_rng(seed)
    return spatial.exp_so3(rng.normal(size=3))


# ---------------------------------------------------------------------------------------------------
# Analytic primitives
# ---------------------------------------------------------------------------------------------------


def test_cuboid_spot_values():
    c = Cuboid(10, 1, 1)
    assert c.kind == "cuboid"
    assert c.mass == pytest.approx(10.0, rel=1e-15)
    np.testing.assert_allclose(c.I, [10 / 12 * 2, 10 / 12 * 101, 10 / 12 * 101], rtol=1e-15)
    np.testing.assert_array_equal(c.E_sb, np.eye(4))


def test_cuboid_density_and_axes_not_reordered():
    c = Cuboid(1, 2, 3, density=2.5)
    m = 2.5 * 6
    assert c.mass == pytest.approx(m, rel=1e-15)
    assert c.density == 2.5
    # I follows the sides (6.5, 5, 2.5) * m / 6: deliberately not sorted.
    np.testing.assert_allclose(c.I, [m / 12 * 13, m / 12 * 10, m / 12 * 5], rtol=1e-15)
    np.testing.assert_array_equal(c.E_sb, np.eye(4))


def test_sphere_spot_values():
    s = Sphere(2.0, density=3.0)
    m = 3.0 * 4.0 / 3.0 * math.pi * 8.0
    assert s.kind == "sphere"
    assert s.mass == pytest.approx(m, rel=1e-15)
    np.testing.assert_allclose(s.I, [0.4 * m * 4.0] * 3, rtol=1e-15)
    np.testing.assert_array_equal(s.E_sb, np.eye(4))


def test_cylinder_spot_values():
    c = Cylinder(0.5, 4.0, density=2.0)
    m = 2.0 * math.pi * 0.25 * 4.0
    assert c.kind == "cylinder"
    assert c.mass == pytest.approx(m, rel=1e-15)
    Ixy = m * (3 * 0.25 + 16.0) / 12.0
    np.testing.assert_allclose(c.I, [Ixy, Ixy, m * 0.25 / 2.0], rtol=1e-15)
    np.testing.assert_array_equal(c.E_sb, np.eye(4))


def test_spatial_inertia_is_diagonal_angular_first():
    M = Cuboid(10, 1, 1).spatial_inertia()
    expected = np.diag([10 / 12 * 2, 10 / 12 * 101, 10 / 12 * 101, 10, 10, 10])
    np.testing.assert_allclose(M, expected, rtol=1e-15)


def test_shapes_are_immutable():
    c = Cuboid(1, 2, 3)
    with pytest.raises(AttributeError):
        c.mass = 5.0
    with pytest.raises(ValueError):
        c.I[0] = 0.0
    with pytest.raises(ValueError):
        c.E_sb[0, 3] = 1.0
    assert c.mass == 6.0 and c.I[0] == 6.5


# ---------------------------------------------------------------------------------------------------
# Composite
# ---------------------------------------------------------------------------------------------------


def test_composite_of_two_halves_equals_box():
    box = Cuboid(4.0, 2.0, 1.0, density=1.5)
    half = Cuboid(2.0, 2.0, 1.0, density=1.5)
    comp = Composite([(half, spatial.trans(-1.0, 0, 0)), (half, spatial.trans(1.0, 0, 0))])
    assert comp.kind == "composite"
    assert abs(comp.mass - box.mass) <= 1e-12 * box.mass
    assert rel(comp.I, box.I) <= 1e-12
    assert np.abs(comp.E_sb[:3, 3]).max() <= 1e-12
    np.testing.assert_array_equal(comp.E_sb[:3, :3], np.eye(3))  # already diagonal: axes kept
    assert comp.density == pytest.approx(1.5, rel=1e-15)


def test_composite_offset_halves_centre():
    half = Cuboid(2.0, 2.0, 1.0)
    comp = Composite([(half, spatial.trans(2.0, 3.0, -1.0)), (half, spatial.trans(4.0, 3.0, -1.0))])
    np.testing.assert_allclose(comp.E_sb[:3, 3], [3.0, 3.0, -1.0], rtol=0, atol=1e-12)
    assert rel(comp.I, Cuboid(4.0, 2.0, 1.0).I) <= 1e-12


def _cuboid_cylinder():
    cub = Cuboid(2.0, 1.0, 0.5, density=1.2)
    cyl = Cylinder(0.3, 1.5, density=7.8)
    R = spatial.rot_axis_angle((1.0, 2.0, -0.5), 0.7)
    E_cyl = spatial.make_E(R, (1.5, 0.4, -0.2))
    E_cub = spatial.trans(-0.3, 0.1, 0.05)
    return cub, E_cub, cyl, E_cyl, Composite([(cub, E_cub), (cyl, E_cyl)])


def test_composite_cuboid_cylinder_mass_and_centre():
    cub, E_cub, cyl, E_cyl, comp = _cuboid_cylinder()
    m = cub.mass + cyl.mass
    assert comp.mass == pytest.approx(m, rel=1e-14)
    centre = (cub.mass * E_cub[:3, 3] + cyl.mass * E_cyl[:3, 3]) / m
    np.testing.assert_allclose(comp.E_sb[:3, 3], centre, rtol=0, atol=1e-14)


def test_composite_cuboid_cylinder_inertia_about_origin():
    cub, E_cub, cyl, E_cyl, comp = _cuboid_cylinder()
    # Summed spatial inertia about the composite frame's origin, axes of c.
    M_sum = sum(spatial.inertia_transform(s.spatial_inertia(), spatial.inv_se3(E @ s.E_sb))
                for s, E in ((cub, E_cub), (cyl, E_cyl)))
    M_back = spatial.inertia_transform(comp.spatial_inertia(), spatial.inv_se3(comp.E_sb))
    assert rel(M_back, M_sum) <= 1e-12


def test_composite_cuboid_cylinder_classical_parallel_axis():
    cub, E_cub, cyl, E_cyl, comp = _cuboid_cylinder()
    c = comp.E_sb[:3, 3]
    J = np.zeros((3, 3))
    for s, E in ((cub, E_cub), (cyl, E_cyl)):
        R = E[:3, :3]
        d = E[:3, 3] - c
        J += R @ np.diag(s.I) @ R.T + s.mass * (d @ d * np.eye(3) - np.outer(d, d))
    assert rel(inertia_tensor(comp), J) <= 1e-12
    assert np.all(comp.I > 0)


def test_composite_frame_is_right_handed_rotation():
    *_, comp = _cuboid_cylinder()
    R = comp.E_sb[:3, :3]
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-13)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-13)
    np.testing.assert_array_equal(comp.E_sb[3], [0, 0, 0, 1])
    assert np.abs(R - np.eye(3)).max() > 1e-3  # the rotated cylinder really tilts the principal axes


def test_composite_of_composite():
    *_, comp = _cuboid_cylinder()
    E = spatial.make_E(spatial.rot_z(0.4), (1.0, 2.0, 3.0))
    outer = Composite([(comp, E)])
    assert outer.mass == pytest.approx(comp.mass, rel=1e-14)
    np.testing.assert_allclose(np.sort(outer.I), np.sort(comp.I), rtol=1e-12)
    np.testing.assert_allclose(outer.E_sb[:3, 3], (E @ comp.E_sb)[:3, 3], atol=1e-12)


# ---------------------------------------------------------------------------------------------------
# Mesh (Mirtich)
# ---------------------------------------------------------------------------------------------------


def test_box_mesh_is_outward():
    V, F = box_mesh(1.0, 1.0, 1.0)
    n = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
    assert np.all(np.einsum("ij,ij->i", n, V[F].mean(axis=1)) > 0)


def test_regular_box_mesh_matches_cuboid():
    sides, centre = (1.3, 2.1, 0.7), (0.3, -0.2, 0.5)
    V, F = box_mesh(*sides, centre=centre)
    mesh = Mesh(V, F, density=2.7)
    box = Cuboid(*sides, density=2.7)
    assert mesh.kind == "mesh"
    assert abs(mesh.mass - box.mass) <= 1e-12 * box.mass
    assert rel(mesh.I, box.I) <= 1e-12
    np.testing.assert_allclose(mesh.E_sb[:3, 3], centre, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(mesh.E_sb[:3, :3], np.eye(3))
    assert mesh.volume == pytest.approx(1.3 * 2.1 * 0.7, rel=1e-12)
    assert mesh.faces.shape == (12, 3) and mesh.path is None


def test_obj_parser_quads_slashes_negative_indices(tmp_path):
    V, _ = box_mesh(1.0, 2.0, 3.0)
    lines = ["# a box written with every face syntax", "o box", "mtllib none.mtl"]
    lines += [f"v {x:.17g} {y:.17g} {z:.17g}" for x, y, z in V]
    lines += ["vt 0 0", "vn 0 0 1", "s off", "usemtl m", "g g1"]
    # Quads (CCW from outside) as i, i/t, i/t/n, i//n and negative (relative) indices.
    lines += ["f 1 3 4 2", "f 5/1 6/1 8/1 7/1", "f 1/1/1 2/1/1 6/1/1 5/1/1", "f 3//1 7//1 8//1 4//1",
              "f -8 -4 -2 -6", "f -7 -5 -1 -3"]
    path = tmp_path / "box.obj"
    path.write_text("\n".join(lines) + "\n")
    mesh = Mesh.from_obj(path, density=2.0, scale=2.0)
    box = Cuboid(2.0, 4.0, 6.0, density=2.0)
    assert mesh.faces.shape == (12, 3)
    assert mesh.path == str(path)
    assert rel(mesh.mass, box.mass) <= 1e-12
    assert rel(mesh.I, box.I) <= 1e-12
    np.testing.assert_allclose(mesh.vertices, 2.0 * V)


def test_cuboid_obj_close_to_box():
    mesh = Mesh.from_obj(CUBOID_OBJ)
    assert abs(mesh.mass - 6.0) <= 1e-6 * 6.0
    assert abs(mesh.mass - 6.0) > 0  # the file's perturbed vertex is really used
    np.testing.assert_allclose(np.sort(mesh.I), [2.5, 5.0, 6.5], rtol=1e-6)
    assert rel(inertia_tensor(mesh), np.diag([6.5, 5.0, 2.5])) <= 1e-6
    assert np.abs(mesh.E_sb[:3, 3]).max() <= 1e-6
    assert np.linalg.det(mesh.E_sb[:3, :3]) == pytest.approx(1.0, abs=1e-12)


def test_cuboid_obj_agrees_with_tetrahedra():
    mesh = Mesh.from_obj(CUBOID_OBJ)
    m, c, J = tetra_mass_properties(*load_obj_plain(CUBOID_OBJ))
    assert rel(mesh.mass, m) <= 1e-12
    assert np.abs(mesh.E_sb[:3, 3] - c).max() <= 1e-12
    assert rel(inertia_tensor(mesh), J) <= 1e-12


@pytest.fixture(scope="module")
def gears():
    return Mesh.from_obj(GEARS_OBJ)


def test_gears_mirtich_agrees_with_tetrahedra(gears):
    V, F = load_obj_plain(GEARS_OBJ)
    m, c, J = tetra_mass_properties(V, F)
    extent = np.abs(V).max()
    assert rel(gears.mass, m) <= 1e-10
    assert np.abs(gears.E_sb[:3, 3] - c).max() <= 1e-10 * extent
    assert rel(inertia_tensor(gears), J) <= 1e-10
    assert gears.vertices.shape == V.shape and gears.faces.shape == F.shape


def test_gears_density_scales_mass_and_inertia(gears):
    heavy = Mesh.from_obj(GEARS_OBJ, density=7.8)
    assert heavy.mass == pytest.approx(7.8 * gears.mass, rel=1e-14)
    np.testing.assert_allclose(heavy.I, 7.8 * gears.I, rtol=1e-12)


def test_gears_invariant_under_rigid_motion(gears):
    R = random_rotation(7)
    t = np.array([3.0, -5.0, 7.0])
    moved = Mesh(gears.vertices @ R.T + t, gears.faces)
    assert rel(moved.mass, gears.mass) <= 1e-12
    assert rel(moved.I, gears.I) <= 1e-9
    np.testing.assert_allclose(moved.E_sb[:3, 3], R @ gears.E_sb[:3, 3] + t, rtol=0, atol=1e-10)
    assert rel(inertia_tensor(moved), R @ inertia_tensor(gears) @ R.T) <= 1e-9


def test_gears_frame_is_right_handed_principal(gears):
    R = gears.E_sb[:3, :3]
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-12)
    assert np.all(gears.I > 0)


def test_flipped_mesh_raises(gears):
    with pytest.raises(ModelError, match="gears-flipped"):
        Mesh(gears.vertices, gears.faces[:, ::-1], name="gears-flipped")


def test_flipped_obj_names_file(tmp_path):
    text = CUBOID_OBJ.read_text().splitlines()
    flipped = [" ".join([t[0], *t[1:][::-1]]) if t and t[0] == "f" else line
               for line, t in ((line, line.split()) for line in text)]
    path = tmp_path / "inside_out.obj"
    path.write_text("\n".join(flipped) + "\n")
    with pytest.raises(ModelError, match=r"inside_out\.obj.*not positive"):
        Mesh.from_obj(path)


def test_open_mesh_raises():
    V, F = box_mesh(1.0, 1.0, 1.0, centre=(5.0, 0.0, 0.0))
    with pytest.raises(ModelError, match="mesh 'open-box': the surface is not closed"):
        Mesh(V, F[2:], name="open-box")  # missing the -z face: the signed volume alone is still positive


# ---------------------------------------------------------------------------------------------------
# Malformed OBJ files
# ---------------------------------------------------------------------------------------------------

_GOOD_HEAD = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"


@pytest.mark.parametrize(
    ("body", "pattern"),
    [
        ("v 0 0 0\nv 1 0 0\nv 0 1.5.0 0\nv 0 0 1\nf 1 3 2\n", r"line 3\b"),
        ("v 0 0 0\nv 1 0\n", r"line 2\b"),
        ("v 0 0 0\nv 1 nan 0\n", r"line 2\b"),
        (_GOOD_HEAD + "f 1 3 2\nf 1 2 9\n", r"line 6\b.*outside"),
        (_GOOD_HEAD + "f 1 3 -7\n", r"line 5\b.*outside"),
        (_GOOD_HEAD + "f 1 0 2\n", r"line 5\b.*0"),
        (_GOOD_HEAD + "f 1 x 2\n", r"line 5\b"),
        (_GOOD_HEAD + "f 1 2\n", r"line 5\b"),
        (_GOOD_HEAD + "# no faces here\n", "no faces"),
    ],
    ids=["bad-vertex-number", "short-vertex", "nan-vertex", "index-too-large", "negative-out-of-range",
         "zero-index", "bad-index", "two-vertex-face", "no-faces"],
)
def test_malformed_obj_raises_naming_line(tmp_path, body, pattern):
    path = tmp_path / "broken.obj"
    path.write_text(body)
    with pytest.raises(ModelError, match=pattern) as info:
        Mesh.from_obj(path)
    assert "broken.obj" in str(info.value)


def test_missing_obj_raises(tmp_path):
    with pytest.raises(ModelError, match=r"nowhere\.obj"):
        Mesh.from_obj(tmp_path / "nowhere.obj")


def test_tetrahedron_obj_ok(tmp_path):
    path = tmp_path / "tet.obj"
    path.write_text(_GOOD_HEAD + "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n")
    mesh = Mesh.from_obj(path)
    assert mesh.mass == pytest.approx(1.0 / 6.0, rel=1e-14)
    np.testing.assert_allclose(mesh.E_sb[:3, 3], [0.25, 0.25, 0.25], atol=1e-15)


# ---------------------------------------------------------------------------------------------------
# Bad inputs
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "pattern"),
    [
        (lambda: Cuboid(1, -2, 3), r"cuboid: side lengths .*\(1, -2, 3\)"),
        (lambda: Cuboid(0, 2, 3), "cuboid: side lengths"),
        (lambda: Cuboid(1, math.inf, 3), "cuboid: side lengths"),
        (lambda: Cuboid(1, math.nan, 3), "cuboid: side lengths"),
        (lambda: Cuboid("a", 2, 3), "cuboid: side lengths"),
        (lambda: Cuboid(1, 2, 3, density=0.0), "cuboid: density"),
        (lambda: Cuboid(1, 2, 3, density=-1.0), "cuboid: density"),
        (lambda: Sphere(0.0), "sphere: radius"),
        (lambda: Sphere(math.nan), "sphere: radius"),
        (lambda: Sphere(1.0, density=math.inf), "sphere: density"),
        (lambda: Cylinder(-1.0, 2.0), "cylinder: radius and height"),
        (lambda: Cylinder(1.0, 0.0), "cylinder: radius and height"),
        (lambda: Cylinder(1.0, 2.0, density=-3.0), "cylinder: density"),
    ],
    ids=["cuboid-negative", "cuboid-zero", "cuboid-inf", "cuboid-nan", "cuboid-str", "cuboid-density-0",
         "cuboid-density-neg", "sphere-zero", "sphere-nan", "sphere-density-inf", "cylinder-radius",
         "cylinder-height", "cylinder-density"],
)
def test_bad_primitive_raises(make, pattern):
    with pytest.raises(ModelError, match=pattern):
        make()


def _E(R=None, p=(0.0, 0.0, 0.0)):
    return spatial.make_E(R, p)


@pytest.mark.parametrize(
    ("parts", "pattern"),
    [
        ([], "at least one part"),
        ([("box", np.eye(4))], "part 0: expected a Shape"),
        ([(Cuboid(1, 1, 1), np.eye(4)), (Cuboid(1, 1, 1),)], "part 1: expected a .shape, E_cp. pair"),
        ([(Cuboid(1, 1, 1), np.eye(3))], "part 0: .*4x4"),
        ([(Cuboid(1, 1, 1), _E(2.0 * np.eye(3)))], "part 0: .*not a rigid"),
        ([(Cuboid(1, 1, 1), _E(np.diag([1.0, 1.0, -1.0])))], "part 0: .*not a rigid"),
        ([(Cuboid(1, 1, 1), _E(np.eye(3) + 1e-6))], "part 0: .*not a rigid"),
        ([(Cuboid(1, 1, 1), np.vstack([np.eye(4)[:3], [0.0, 0.0, 1.0, 1.0]]))], "part 0: .*not a rigid"),
        ([(Cuboid(1, 1, 1), _E(p=(0.0, math.nan, 0.0)))], "part 0: .*finite"),
        ([(Cuboid(1, 1, 1), "identity")], "part 0: .*4x4"),
    ],
    ids=["empty", "not-a-shape", "not-a-pair", "3x3", "scaled", "reflection", "not-orthonormal",
         "last-row", "nan", "string"],
)
def test_bad_composite_raises(parts, pattern):
    with pytest.raises(ModelError, match=pattern):
        Composite(parts)


def test_composite_accepts_nearly_rigid_transform():
    E = _E(spatial.rot_x(0.3))
    E[:3, :3] += 1e-12
    comp = Composite([(Cuboid(1, 2, 3), E)])
    assert comp.mass == pytest.approx(6.0, rel=1e-14)


@pytest.mark.parametrize(
    ("vertices", "faces", "pattern"),
    [
        ([[0, 0, 0], [1, 0, 0], [0, math.inf, 0], [0, 0, 1]], [[0, 2, 1]], "vertex 2 is not finite"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 2, 3]], "face 0 has a vertex index outside"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, -1, 2]], "face 0 has a vertex index outside"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.zeros((0, 3), dtype=int), "no faces"),
        ([[0, 0], [1, 0], [0, 1]], [[0, 1, 2]], "vertices must have shape"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0.0, 1.0, 2.0]], "integer array"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 1, 2, 3]], "integer array"),
        ([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 2, 1]], "not positive"),
    ],
    ids=["non-finite-vertex", "index-too-large", "negative-index", "no-faces", "2d-vertices",
         "float-faces", "quad-faces", "flat"],
)
def test_bad_mesh_raises(vertices, faces, pattern):
    with pytest.raises(ModelError, match=f"mesh 'thing': .*{pattern}"):
        Mesh(vertices, faces, name="thing")


def test_bad_mesh_density_raises():
    V, F = box_mesh(1.0, 1.0, 1.0)
    with pytest.raises(ModelError, match="mesh 'thing': density"):
        Mesh(V, F, density=0.0, name="thing")


def test_bad_obj_scale_raises():
    with pytest.raises(ModelError, match=r"cuboid\.obj.*scale"):
        Mesh.from_obj(CUBOID_OBJ, scale=-1.0)
