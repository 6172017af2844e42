"""The compiled Euler loop for models with equality constraints or coupled joints (Python side).

Runs :func:`redmax.integrators._loop.euler_loop` on the coordinate model with the constraint views of
:mod:`redmax.integrators._constrained`: the states stay in joint coordinates inside the loop and are restricted to
the model's DOFs by the caller.
"""

from __future__ import annotations

from redmax.configuration import State
from redmax.integrators._constrained import constraint_views

__all__ = ["run_compiled"]


def run_compiled(model, program, opts, inputs, st, t, h, n, Q, QD, JS, E, V, RE, beta, progress, watch=None,
                 solver=None) -> None:
    """Fill Q, QD (N+1, ncoord), JS, E, V (N+1, nviol), RE (N+1, nreact) from the start state ``st`` (DOFs).
    ``solver``: the linear solver (the dense factorisation for None or "dense"; "pcg" solves the rows and couplings
    by the Schur complement, one PCG solve per row)."""
    from redmax.integrators.euler_parts import _run_compiled

    full = model.coordinate_model
    d = model.dofs
    pcg = solver is not None and solver.matrix_free
    cv = constraint_views(model, beta, matrix_free=pcg)
    st_full = State(d.expand(st.q).astype(float), d.expand_rate(st.qd).astype(float), st.t, st.jstate)
    Vb = V if V.shape[1] else V.reshape(V.shape[0], 0)
    _run_compiled(full, program, opts, inputs, st_full, t, h, n, Q, QD, JS, E, progress, cv, Vb, RE, watch=watch,
                  solver=solver if pcg else None, dofs=d if pcg else None)
