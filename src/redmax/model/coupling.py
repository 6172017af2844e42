"""Hyper-reduced coordinates (RedMax paper Eqs. 8-10, notes §2.6): joints that follow other joints.

``ModelBuilder.couple(dependent, on, ratio)`` makes ``q_dependent = ratio * q_on (+ offset)`` per DOF and removes
the dependent joint's coordinates from the model's DOFs: ``q_joint = T q + q_offset`` with a constant T
(:class:`redmax.model.DofLayout`), ``J_mR = J_mr T`` and ``M_R = T^T M_r T`` (paper Eq. 10).  The coupled model
keeps the tree in joint coordinates and holds the same model with every coordinate a DOF
(``model.coordinate_model``); algorithms run there and map through ``model.dofs`` at their boundary.

URDF mimic joints become couplings with :func:`redmax.io.urdf_mimic.couple_mimic_joints`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from redmax.errors import ModelError

__all__ = ["Couplings", "check_coupling_args", "coupled_model", "resolve_couplings"]


def check_coupling_args(dependent, on, ratio, offset=0.0) -> tuple:
    """Validate the arguments of ``ModelBuilder.couple``: ``(dependent, on, ratio, offset)``."""
    for what, v in (("dependent", dependent), ("on", on)):
        if not isinstance(v, str) or not v:
            raise ModelError(f"couple: {what} must be a joint name, got {v!r}")
    if dependent == on:
        raise ModelError(f"joint '{dependent}': cannot be coupled to itself")
    vals = []
    for what, v in (("ratio", ratio), ("offset", offset)):
        if isinstance(v, bool):
            raise ModelError(f"joint '{dependent}': coupling {what} must be a number, got {v!r}")
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise ModelError(f"joint '{dependent}': coupling {what} must be a number, got {v!r}") from None
        if not np.isfinite(x):
            raise ModelError(f"joint '{dependent}': coupling {what} must be finite, got {v!r}")
        vals.append(x)
    return (dependent, on, vals[0], vals[1])


@dataclass(frozen=True)
class Couplings:
    """The resolved map (see :class:`redmax.model.DofLayout`)."""

    coord_dof: np.ndarray
    coord_coef: np.ndarray
    q_offset: np.ndarray
    dof_coord: np.ndarray
    records: tuple


def resolve_couplings(couplings, recs, idx, coord_names, q0, qd0, rest, rest_default) -> Couplings:
    """Check the couplings against the ordered body records, resolve chains (a joint coupled to a coupled joint
    follows the latter's independent joint), and overwrite the dependent coordinates of ``q0``, ``qd0`` (and of
    ``rest`` where it defaults to q0) in place.  Raises ModelError naming the coupling (``couplings[c]``, the c-th
    ``couple`` call, which is the scene file's table index) and the joint."""
    names = [r.joint_name for r in recs]
    index = {n: i for i, n in enumerate(names)}
    follow: dict[int, tuple[int, float, float]] = {}
    where: dict[int, str] = {}  # dependent joint -> "couplings[c]", the c-th couple() call (scene-file table index)
    for c, (dep, on, ratio, offset) in enumerate(couplings):
        at = f"couplings[{c}]"
        for n in (dep, on):
            if n not in index:
                raise ModelError(f"{at}: joint '{n}': no such joint (in couple('{dep}', '{on}', ...))")
        i, j = index[dep], index[on]
        if i in follow:
            raise ModelError(f"{at}: joint '{dep}': coupled twice (first in {where[i]})")
        for k in (i, j):
            jt = recs[k].joint
            if jt.can_reparam() or jt.chart_shifts():
                raise ModelError(f"{at}: joint '{names[k]}': a {jt.kind} joint re-parameterises its coordinates and "
                                 "cannot be coupled (the map must be constant)")
        ni, nj = idx[i + 1] - idx[i], idx[j + 1] - idx[j]
        if ni != nj or ni == 0:
            raise ModelError(f"{at}: joint '{dep}': coupled to joint '{on}' with a different number of DOFs "
                             f"({ni} and {nj})")
        follow[i] = (j, ratio, offset)
        where[i] = at
    # resolve chains: i -> (root, ratio, offset)
    resolved: dict[int, tuple[int, float, float]] = {}
    for i in follow:
        r, o, j, seen = 1.0, 0.0, i, {i}
        while j in follow:
            nxt, rr, oo = follow[j]
            r, o = r * rr, r * oo + o
            j = nxt
            if j in seen:
                raise ModelError(f"{where[i]}: joint '{names[i]}': coupling cycle through joint '{names[j]}'")
            seen.add(j)
        resolved[i] = (j, r, o)
    n = int(idx[-1])
    dep_coord = np.zeros(n, dtype=bool)
    for i in resolved:
        dep_coord[idx[i]:idx[i + 1]] = True
    dof_coord = np.flatnonzero(~dep_coord).astype(np.int64)
    dof_of = -np.ones(n, dtype=np.int64)
    dof_of[dof_coord] = np.arange(dof_coord.size)
    coord_dof = dof_of.copy()
    coef = np.ones(n)
    off = np.zeros(n)
    for i, (j, r, o) in resolved.items():
        for k in range(idx[i + 1] - idx[i]):
            c, src = idx[i] + k, idx[j] + k
            coord_dof[c] = dof_of[src]
            coef[c] = r
            off[c] = o
            q0[c] = r * q0[src] + o
            qd0[c] = r * qd0[src]
            if rest_default[i]:
                rest[c] = q0[c]
    records = tuple((names[i], names[follow[i][0]], follow[i][1], follow[i][2]) for i in sorted(follow))
    return Couplings(coord_dof, coef, off, dof_coord, records)


def coupled_model(model, cp: Couplings):
    """The hyper-reduced model of ``model`` (every coordinate a DOF) under the couplings ``cp``."""
    from redmax.configuration import State
    from redmax.model.inputs import frozen
    from redmax.model.model import Defaults, DofLayout

    full = model.dofs
    dofs = DofLayout(
        ndof=int(cp.dof_coord.size), dof_names=tuple(full.dof_names[c] for c in cp.dof_coord),
        dof_joint=frozen(full.dof_joint[cp.dof_coord]), ncoord=full.ndof, coord_names=tuple(full.dof_names),
        coord_dof=frozen(cp.coord_dof), coord_coef=frozen(cp.coord_coef), q_offset=frozen(cp.q_offset),
        dof_coord=frozen(cp.dof_coord), couplings=cp.records)
    st = model.defaults.state
    state0 = State(frozen(st.q[cp.dof_coord]), frozen(st.qd[cp.dof_coord]), 0.0, st.jstate)
    return dataclasses.replace(model, dofs=dofs, defaults=Defaults(state0, model.defaults.inputs), uncoupled=model)
