"""The RedMax paper's scaling scenes (§3, Table 2, Fig. 4): parametric bridges, an umbrella, a tree and a chain,
built as the authors' C++ builder builds them, so that their sizes and DOF counts match the paper's.

Conventions of that builder (our construction follows it; units are each scene's own, y up):

* every body is a block ``C[x y z]`` (a cuboid) or a cylinder; its frame sits at its centre, parallel to its
  joint frame;
* a joint is given by its parent block, the joint point ``p_par`` in the parent block's frame, the joint point
  ``p_ch`` in the child block's frame, an axis and an initial value ``q0``: the joint frame sits at the joint point
  (placement ``Trans(p_par - p_ch(parent))`` from the parent's joint frame, ``Trans(p_par)`` from the world for a
  root), the body at ``Trans(-p_ch)`` from its joint frame;
* the initial configuration is ``q = q0`` (not zero), and joint springs rest at ``q0``;
* point loads are explicit (``stiffness="none"``, as in the C++ code, which keeps the step matrix symmetric for
  PCG); every block has viscous body damping (implicit), every cable is a spring-damper of tension
  ``k (l - L)/L + d ldot/L`` with L its initial length (:class:`redmax.forces.SpringDamper`, whose damping enters
  once: the original C++ counted a spring-damper's damping twice).

Scenes (``redmax.scenes.load(name, **params)``; DOFs in brackets):

* ``paper/simple_bridge(n_deck)`` [n_deck]: the paper's BRIDGE with rigid towers; every cable joins a deck block to
  a fixed tower, so that the projected block-diagonal preconditioner is the system matrix (one PCG iteration).
* ``paper/bridge(n_deck, n_tower, load)`` [n_deck + 2 n_tower]: BRIDGE with flexible towers (stacks of stiff
  hinges); ``load`` is a point force along -y at deck block 1's left end (the paper's "exaggerated weight":
  2.4e6).
* ``paper/umbrella(n)`` [1 + 16 n + 16 floor(n/2)]: UMBRELLA: a runner pushed up a fixed tube opens eight ribs of n
  universal-jointed cylinders through eight stretchers of floor(n/2), each closed onto its rib by a hinge-type loop
  about the stretcher's x axis (``Loop(..., axis=...)``), the ribs joined by canopy springs; no gravity, no drift
  correction.
* ``paper/tree(levels)`` [3 (2^levels - 1)]: a hanging mobile of cross bars and leaves joined by springs, pulled
  at its four corner leaves.
* ``paper/chain_pcg(n)`` [n]: a hanging chain of hinge blocks (not the paper's CHAIN demo).

The models are built without the joint-space inertia check at the initial state (a test runs it on each scene at
its defaults), as the built-in scene files load.
"""

from __future__ import annotations

import math

import numpy as np

from redmax.bodies import Cuboid, Cylinder
from redmax.builder import ModelBuilder
from redmax.constraints import Loop
from redmax.errors import SceneError
from redmax.forces import SpringDamper, WorldPointForce
from redmax.joints import Fixed, Prismatic, Revolute, Universal
from redmax.scene import Scene
from redmax.scenes.catalogue import register
from redmax.spatial import make_E, rot_axis_angle, rot_x, rot_y, rot_z, trans

__all__ = ["deck_camber"]

Y_AXIS, Z_AXIS = (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


class _Blocks:
    """The C++ builder's placement rules (module docstring) over a :class:`ModelBuilder`."""

    def __init__(self, name: str, gravity, density: float, damping: float):
        self.b = ModelBuilder(name, gravity)
        self.density = density
        self.damping = damping
        self.p_ch: dict[str, np.ndarray] = {}

    def add(self, name, size, joint, parent=None, p_par=(0.0, 0.0, 0.0), p_ch=(0.0, 0.0, 0.0), q0=None,
            k=0.0, d=0.0, R=None):
        p_par, p_ch = np.asarray(p_par, dtype=float), np.asarray(p_ch, dtype=float)
        origin = p_par if parent is None else p_par - self.p_ch[parent]
        placement = make_E(np.eye(3) if R is None else R, origin)
        self.b.add_body(name, Cuboid(*size, density=self.density), joint, parent=parent, joint_name=name,
                        joint_placement=placement, body_placement=trans(*(-p_ch)), damping=self.damping,
                        q=None if q0 is None else [q0], stiffness=k, joint_damping=d)
        self.p_ch[name] = p_ch
        return name


def deck_camber(n_deck: int) -> tuple[np.ndarray, float]:
    """``(c, l)``: the relative hinge angles ``c`` (n_deck + 1,) of the deck's camber (a sinh profile whose
    cumulative angle rises to ``c[0]`` at the left end, is 0 at the middle and falls to ``-c[0]`` at the right)
    and the length ``l`` of a deck block, so that the deck spans 24 (n_deck = 20: ``c[0]`` = 0.125007,
    ``l`` = 1.202287)."""
    m = n_deck // 2
    s = 0.5 / n_deck
    a = [-math.sinh(s * (i + 1) / (m - 1)) for i in range(m)]
    c = np.zeros(n_deck + 1)
    for i in range(m):
        c[m - 1 - i] = a[i]
        c[n_deck - m + 1 + i] = a[i]
    c[0] -= sum(a)
    cum = np.cumsum(c[:n_deck])
    length = float(np.mean((24.0 / n_deck) / np.abs(np.cos(cum))))
    return c, length


MAX_SIZE = 100_000  # bodies per size parameter (a larger model would take minutes to build; the paper's are <= 1280)


def _check_int(scene: str, key: str, value: int, low: int, high: int = MAX_SIZE) -> None:
    if not low <= value <= high:
        raise SceneError(f"scene {scene!r}: parameter {key!r} must be >= {low} and <= {high}, got {value}")


def _deck_and_cables(blk: _Blocks, n_deck: int, deck_size_yz, k_deck, d_deck, tower_tops, k_cable, d_cable):
    """The cambered deck hinged from the left anchor's top, the 30 cables (1-15 to ``tower_tops[0]``, the left
    tower, 16-30 to ``tower_tops[1]``) and the hinge-type closure of the deck's right end to the right anchor's
    top."""
    c, ell = deck_camber(n_deck)
    deck = []
    for i in range(n_deck):
        parent = "anchor_left" if i == 0 else deck[-1]
        p_par = (0.0, 1.5, 0.0) if i == 0 else (ell / 2, 0.0, 0.0)
        free = i == 0
        deck.append(blk.add(f"deck{i}", (ell, *deck_size_yz), Revolute(Z_AXIS), parent, p_par, (-ell / 2, 0.0, 0.0),
                            q0=float(c[i]), k=0.0 if free else k_deck, d=0.0 if free else d_deck))
    span = ell * n_deck
    delta = span / 31.0
    for j in range(1, 31):
        s = j * delta
        block = min(int(s // ell), n_deck - 1)
        deck_end = (deck[block], (math.fmod(s, ell) - ell / 2, 0.0, 0.0))
        tower_end = tower_tops[0] if j <= 15 else tower_tops[1]
        blk.b.add_force(SpringDamper(deck_end, tower_end, k=k_cable, d=d_cable, name=f"cable{j}"))
    blk.b.add_constraint(Loop([(deck[-1], (ell / 2, 0.0, 0.0)), ("anchor_right", (0.0, 1.5, 0.0))], name="closure"))
    return deck


def _ground_and_anchors(blk: _Blocks, depth: float):
    blk.add("ground", (25.0, 0.5, depth), Fixed())
    for side, x in (("right", 12.0), ("left", -12.0)):
        blk.add(f"anchor_{side}", (0.5, 3.0, depth), Fixed(), "ground", (x, 0.0, 0.0), (0.0, -1.5, 0.0))


@register("paper/simple_bridge", "BRIDGE with rigid towers (paper Table 2): n_deck hinged deck blocks, 30 cables to "
          "fixed towers", params={"n_deck": 20})
def simple_bridge(n_deck: int) -> Scene:
    _check_int("paper/simple_bridge", "n_deck", n_deck, 4)
    blk = _Blocks("paper/simple_bridge", (0.0, -9.8, 0.0), density=1000.0, damping=1.0)
    blk.add("ground", (25.0, 0.5, 0.5), Fixed())
    for side, x in (("right", 5.0), ("left", -5.0)):
        blk.add(f"tower_{side}", (0.5, 10.0, 0.5), Fixed(), "ground", (x, 0.0, 0.0), (0.0, -5.0, 0.0))
    for side, x in (("right", 12.0), ("left", -12.0)):
        blk.add(f"anchor_{side}", (0.5, 3.0, 0.5), Fixed(), "ground", (x, 0.0, 0.0), (0.0, -1.5, 0.0))
    tops = (("tower_left", (0.0, 5.0, 0.0)), ("tower_right", (0.0, 5.0, 0.0)))
    _deck_and_cables(blk, n_deck, (0.5, 0.5), 10.0, 1.0, tops, 1e7, 1e3)
    return Scene("paper/simple_bridge", blk.b.build(check_regular=False), duration=5.0, dt=1e-2, baumgarte=100.0)


@register("paper/bridge", "BRIDGE with flexible towers (paper Table 2): n_deck deck blocks, two towers of n_tower "
          "stiff hinges, 30 cables, a point load at the deck's left end", params={"n_deck": 20, "n_tower": 20,
                                                                                  "load": 0.0})
def bridge(n_deck: int, n_tower: int, load: float) -> Scene:
    _check_int("paper/bridge", "n_deck", n_deck, 4)
    _check_int("paper/bridge", "n_tower", n_tower, 1)
    blk = _Blocks("paper/bridge", (0.0, -9.8, 0.0), density=1000.0, damping=1.0)
    _ground_and_anchors(blk, 1.8)
    h = 10.0 / n_tower
    last = {}
    for i in range(n_tower):
        for side, x in (("right", 5.0), ("left", -5.0)):
            parent = "ground" if i == 0 else last[side]
            p_par = (x, 0.0, 0.0) if i == 0 else (0.0, h / 2, 0.0)
            last[side] = blk.add(f"tower_{side}{i}", (0.5, h, 1.8), Revolute(Z_AXIS), parent, p_par,
                                 (0.0, -h / 2, 0.0), q0=0.0, k=1e8, d=1e3)
    tops = ((last["left"], (0.0, h / 2, 0.0)), (last["right"], (0.0, h / 2, 0.0)))
    deck = _deck_and_cables(blk, n_deck, (0.15, 1.6), 1e8, 1e4, tops, 2.5e7, 1e4)
    if load != 0.0:
        ell = deck_camber(n_deck)[1]
        blk.b.add_force(WorldPointForce(deck[0], (-ell / 2, 0.0, 0.0), (0.0, -load, 0.0), name="load",
                                        stiffness="none"))
    return Scene("paper/bridge", blk.b.build(check_regular=False), duration=5.0, dt=1e-2, baumgarte=100.0)


@register("paper/chain_pcg", "a hanging chain of n hinge blocks (the C++ PCG code's chain scene)", params={"n": 20})
def chain_pcg(n: int) -> Scene:
    _check_int("paper/chain_pcg", "n", n, 1)
    blk = _Blocks("paper/chain_pcg", (0.0, -980.0, 0.0), density=3.0, damping=0.0)
    prev = None
    for i in range(n):
        q0 = 1.5 * math.pi if i == 0 else (math.pi / 4 if i == n - 1 else 0.0)
        p_par = (0.0, 0.0, 0.0) if i == 0 else (1.4, 0.0, 0.0)
        prev = blk.add(f"link{i}", (3.0, 0.8, 0.5), Revolute(Z_AXIS), prev, p_par, (-1.4, 0.0, 0.0), q0=q0)
    # dt 5e-3: undamped, the falling chain of 20 goes unstable under linearly implicit Euler at 1e-2 after 1.5 s
    return Scene("paper/chain_pcg", blk.b.build(check_regular=False), duration=2.0, dt=5e-3)


@register("paper/tree", "a hanging mobile: cross bars and leaves on springy hinges, sibling leaves joined by "
          "springs, pulled at its four corner leaves", params={"levels": 5})
def tree(levels: int) -> Scene:
    _check_int("paper/tree", "levels", levels, 1, 15)
    blk = _Blocks("paper/tree", (0.0, -980.0, 0.0), density=1.0, damping=1.0)
    blk.add("root", (3.0, 0.5, 0.5), Fixed(), None, (0.0, 0.0, 0.0), (1.5, 0.0, 0.0), R=rot_z(math.pi / 2))
    deepest: list[str] = []
    count = [0]

    def grow(parent: str, level: int) -> None:
        axis = Z_AXIS if level % 2 == 1 else Y_AXIS
        p_par = (-1.5, 0.0, 0.0) if level == 1 else (1.5 * 0.95 ** (level - 1), 0.0, 0.0)
        cross = blk.add(f"cross{count[0]}", (12.0 * 0.75 ** (level - 1), 0.5, 0.5), Revolute(axis), parent, p_par,
                        q0=math.pi / 2, k=1e3, d=1.0)
        count[0] += 1
        leaves = []
        for sign, tag in ((-1.0, "a"), (1.0, "b")):
            leaf_len = 3.0 * 0.95 ** level
            leaves.append(blk.add(f"{cross}{tag}", (leaf_len, 0.5, 0.5), Revolute(axis), cross,
                                  (sign * 5.9 * 0.75 ** (level - 1), 0.0, 0.0), (-leaf_len / 2, 0.0, 0.0),
                                  q0=math.pi / 2 if level == 1 else 1.5 * math.pi, k=1e3, d=1.0))
        blk.b.add_force(SpringDamper((leaves[0], (0.0, 0.0, 0.0)), (leaves[1], (0.0, 0.0, 0.0)), k=1e5, d=1.0,
                                     name=f"{cross}_spring"))
        for leaf in leaves:
            if level < levels:
                grow(leaf, level + 1)
            else:
                deepest.append(leaf)

    grow("root", 1)
    model = blk.b.build(check_regular=False)
    from redmax.kinematics import forward_kinematics

    E_wb = forward_kinematics(model, model.q0)[1]
    names = list(model.body_names)
    centres = np.array([E_wb[names.index(leaf)][:3, 3] for leaf in deepest])
    weight = 10.0 * float(np.sum(model.mass))
    for sx in (1.0, -1.0):
        for sz in (1.0, -1.0):
            leaf = deepest[int(np.argmax(sx * centres[:, 0] + sz * centres[:, 2]))]
            blk.b.add_force(WorldPointForce(leaf, (0.0, 0.0, 0.0), (weight * sx, -weight, weight * sz),
                                            name=f"corner_{'p' if sx > 0 else 'm'}x_{'p' if sz > 0 else 'm'}z",
                                            stiffness="none"))
    return Scene("paper/tree", blk.b.build(check_regular=False), duration=2.0, dt=1e-2)


@register("paper/umbrella", "UMBRELLA (paper Table 2): a runner pushed up a tube opens 8 ribs of n universal-jointed "
          "cylinders through 8 stretchers closed onto the ribs, canopy springs between the ribs", params={"n": 10})
def umbrella(n: int) -> Scene:
    _check_int("paper/umbrella", "n", n, 2, MAX_SIZE // 24)
    b = ModelBuilder("paper/umbrella", (0.0, 0.0, 0.0))
    down = rot_x(math.pi / 2)  # (a cylinder's axis is its local z)
    b.add_body("tube", Cylinder(0.5, 60.0), Fixed(), body_placement=make_E(down, (0.0, 30.0, 0.0)), damping=1.0)
    b.add_body("runner", Cylinder(1.0, 5.0), Prismatic(Y_AXIS), parent="tube", joint_placement=trans(0.0, 10.0, 0.0),
               body_placement=make_E(down), damping=1.0)
    b.add_force(WorldPointForce("runner", (0.0, 0.0, 0.0), (0.0, 5000.0, 0.0), name="push",
                               stiffness="none"))
    lr = 50.0 / n
    s = n // 2
    ribs = []
    for k in range(8):
        th = 2.0 * math.pi * k / 8
        rib = []
        for i in range(n):
            rib.append(b.add_body(
                f"rib{k}_{i + 1}", Cylinder(0.3, lr), Universal(), parent="tube" if i == 0 else rib[-1],
                joint_placement=make_E(rot_y(th) @ rot_x(math.radians(80.0)), (0.0, 60.0, 0.0)) if i == 0
                else trans(0.0, 0.0, lr), body_placement=trans(0.0, 0.0, lr / 2), damping=1.0,
                stiffness=0.0 if i == 0 else 1e5, joint_damping=0.0 if i == 0 else 1.0))
        ribs.append(rib)
        # the stretcher: from the runner's joint to the centre of rib body s, straight
        dirn = rot_y(th) @ rot_x(math.radians(80.0)) @ np.array([0.0, 0.0, 1.0])
        target = np.array([0.0, 60.0, 0.0]) + (s - 0.5) * lr * dirn
        d = target - np.array([0.0, 10.0, 0.0])
        L = float(np.linalg.norm(d))
        u = d / L
        ax = np.cross(u, (0.0, 1.0, 0.0))
        R1 = rot_axis_angle(ax / np.linalg.norm(ax), -math.acos(float(u[1]))) @ rot_x(-math.pi / 2) @ rot_z(th)
        ls = L / s
        st = []
        for i in range(s):
            st.append(b.add_body(
                f"stretcher{k}_{i + 1}", Cylinder(0.3, ls), Universal(), parent="runner" if i == 0 else st[-1],
                joint_placement=make_E(R1) if i == 0 else trans(0.0, 0.0, ls), body_placement=trans(0.0, 0.0, ls / 2),
                damping=1.0, stiffness=0.0 if i == 0 else 1e5, joint_damping=0.0 if i == 0 else 1.0))
        b.add_constraint(Loop([(st[-1], (0.0, 0.0, ls / 2)), (rib[s - 1], (0.0, 0.0, 0.0))], axis=(1.0, 0.0, 0.0),
                              name=f"closure{k}"))
    for k in range(8):
        for i in range(n):
            b.add_force(SpringDamper((ribs[k][i], (0.0, 0.0, 0.0)), (ribs[(k + 1) % 8][i], (0.0, 0.0, 0.0)), k=6.0,
                                     d=1.0, name=f"canopy{k}_{i + 1}"))
    return Scene("paper/umbrella", b.build(check_regular=False), duration=1.0, dt=1e-2, baumgarte=0.0)
