"""Dynamics: RedMax equations of motion, RNEA, recursive hybrid/forward dynamics, CRBA and M^-1.

Public functions take a compiled Model and NumPy arrays (real or complex) and return new arrays.
External wrenches ``f_ext`` are (nb, 6) arrays, one wrench per body in that body's principal frame
(centre of mass), angular first ``[torque; force]``.

The recursive algorithms take one state, or a batch of B states as (B, n) arrays (evaluated in parallel by
:mod:`redmax.dynamics.batched`).  With float64 vectors of the right size (and no f_ext/jstate/out) a call goes
straight to the compiled kernel; anything else goes through a checked path that converts the inputs and reports
problems as :class:`redmax.ModelError`.  ``out=`` fills a preallocated result.
"""

from __future__ import annotations

import numpy as np

from redmax._kernels.pool import pool_for
from redmax._validate import describe_model_arg
from redmax.configuration import charts_for, check_charts
from redmax.dynamics import coupled as _coupled
from redmax.dynamics._single_call import entry, lean
from redmax.dynamics.aba import aba_kernel, aba_out, aba_plain, aba_work_size, hybrid_kernel
from redmax.dynamics.crba import crba_kernel, crba_out, crba_plain, crba_work_size
from redmax.dynamics.diagnostics import singular_inertia_message
from redmax.dynamics.minv import minv_kernel, minv_plain, minv_product_kernel
from redmax.dynamics.redmax import (
    RedMaxSystem,
    energies,
    redmax_accelerations,
    redmax_mass_matrix,
    redmax_system,
)
from redmax.dynamics.rnea import rnea_kernel, rnea_out, rnea_plain, rnea_work_size
from redmax.errors import ModelError
from redmax.model.layout import NO_FEXT

__all__ = [
    "RedMaxSystem",
    "aba",
    "crba",
    "energies",
    "hybrid_dynamics",
    "minv",
    "minv_product",
    "redmax_accelerations",
    "redmax_mass_matrix",
    "redmax_system",
    "rnea",
]

_F64 = np.dtype(np.float64)
# The fast paths pass the compiled kernels only writeable, aligned, C-contiguous float64 vectors (``a.flags.carray``)
# and read-only chart words: Numba compiles a kernel once more for every other layout or read-only flag of an
# argument (seconds each, minutes over the test suite).  Other arrays take the checked path, which converts them
# (:func:`_arrays`).


def _model(model, fn: str):
    """The model, or a ModelError when it is something else (a Scene, a path, None)."""
    if hasattr(model, "packed") and hasattr(model, "dofs"):  # a redmax.Model (duck-typed: no import of the model
        return model                                         # package, which sits above this layer)
    if hasattr(getattr(model, "model", None), "packed"):
        raise ModelError(f"{fn}: expected a redmax.Model as first argument, got {type(model).__name__} (a Scene: pass "
                         "scene.model)")
    raise ModelError(f"{fn}: expected a redmax.Model as first argument, got {describe_model_arg(model)}")


def _numeric(a, name: str, model) -> np.ndarray:
    """``a`` as an array of float64 or complex128 (other real or complex dtypes converted); ModelError otherwise."""
    try:
        arr = np.asarray(a)
    except (TypeError, ValueError):
        raise ModelError(f"{model.name}: {name} must be an array of numbers, got {type(a).__name__}") from None
    k = arr.dtype.kind
    if k in "iuf":
        return arr.astype(np.float64, copy=False) if arr.dtype != _F64 else arr
    if k == "c":
        return arr.astype(np.complex128, copy=False)
    got = "None" if a is None else f"dtype {arr.dtype}"
    raise ModelError(f"{model.name}: {name} must hold numbers (float or complex), got {got}")


def _arrays(model, *vs, names=("q", "qd", "qdd")):
    """The vectors as contiguous (ndof,) arrays of one common dtype; ModelError naming a bad one."""
    arrs = [_numeric(v, name, model) for name, v in zip(names, vs, strict=False)]
    dt = np.result_type(*arrs, np.float64)
    out = []
    for name, a in zip(names, arrs, strict=False):
        a = np.ascontiguousarray(a, dtype=dt)
        if not a.flags.writeable:  # e.g. model.q0: a read-only array would compile another copy of every kernel
            a = a.copy()
        if a.shape != (model.ndof,):
            raise ModelError(f"{model.name}: {name} must have shape ({model.ndof},) or (B, {model.ndof}) for a batch, "
                             f"got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"{model.name}: {name} contains NaN or inf")
        out.append(a)
    return out


def _js(model, jstate):
    return charts_for(model, jstate)


def _gscale(model, gravity) -> float:
    if not isinstance(gravity, bool | np.bool_):
        raise ModelError(f"{model.name}: gravity must be True or False, got {gravity!r}")
    return 1.0 if gravity else 0.0


def _fext(model, f_ext, dt):
    """The external wrenches (nb, 6) of a checked call as a read-only C-contiguous array of dtype ``dt`` (or
    ``NO_FEXT``): read-only like the kernels' own "no wrenches" constant, so that every caller of a kernel compiles
    one type (a writeable array would be a second specialisation of every kernel that takes wrenches)."""
    if f_ext is None:
        return NO_FEXT if dt == _F64 else _frozen(NO_FEXT.astype(dt))
    f = _numeric(f_ext, "f_ext", model)
    f = np.ascontiguousarray(f, dtype=np.result_type(f, dt))
    if f.shape != (model.nb, 6):
        raise ModelError(f"{model.name}: f_ext must have shape ({model.nb}, 6), got {f.shape}")
    if not np.all(np.isfinite(f)):
        raise ModelError(f"{model.name}: f_ext contains NaN or inf")
    return _frozen(f.astype(dt))


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _checked(model, kernel, *args):
    """Run a kernel (args: Ii, Ff, q, ..., jstate at index 2 + n_vectors); translate its errors."""
    try:
        return kernel(*args)
    except (ValueError, ZeroDivisionError) as e:  # raised inside the kernel for inputs the checks cannot see
        name = kernel.__name__.removesuffix("_kernel")
        js = next((a for a in args[3:] if isinstance(a, np.ndarray) and a.dtype == np.int64), None)
        if isinstance(e, ZeroDivisionError) or "singular" in str(e) or (str(e) == "overflow" and _singular(model,
                                                                                                            args, js)):
            raise ModelError(f"{model.name}: {name}: "
                             f"{singular_inertia_message(model, args[2].real, js)}") from None
        if str(e) == "overflow":
            raise ModelError(f"{model.name}: {name}: the result is not finite although every input is (the inputs "
                             "are too large: overflow)") from None
        raise ModelError(f"{model.name}: invalid input to {name} ({e})") from None


def _singular(model, args, js) -> bool:
    """Whether M is singular at the state of a failed kernel call (its diagnosis names the joint)."""
    return "regular here" not in singular_inertia_message(model, args[2].real, js)


def _out(model, out, shape, what: str):
    """A caller's output array: float64, C-contiguous, writeable, of ``shape``; ModelError otherwise."""
    if not (isinstance(out, np.ndarray) and out.dtype == _F64 and out.shape == shape and out.flags.c_contiguous
            and out.flags.writeable):
        got = f"{type(out).__name__} {getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}".strip()
        raise ModelError(f"{model.name}: {what}: out must be a writeable C-contiguous float64 array of shape {shape}, "
                         f"got {got}")
    return out


def _is_batch(*vs) -> bool:
    return any(getattr(v, "ndim", np.ndim(v) if isinstance(v, list | tuple) else 1) == 2 for v in vs)


def rnea(model, q, qd, qdd, f_ext=None, jstate=None, gravity: bool = True, *, out=None, threads=None) -> np.ndarray:
    """Inverse dynamics: joint torques (ndof,) that produce ``qdd`` at (q, qd) (RNEA, O(n)).

    Args:
        q, qd, qdd: (ndof,) vectors, or (B, ndof) for a batch of B states (evaluated in parallel; returns (B, ndof);
            see :mod:`redmax.dynamics.batched`).
        f_ext: optional (nb, 6) external wrenches on the bodies (body frames); (B, nb, 6) for a batch.
        jstate: (nb,) chart words (Euler-angle joints), (B, nb) for a batch; default the model's initial charts.
        gravity: include the model's gravity (default True).
        out: optional preallocated result (float64, C-contiguous; (ndof,) or (B, ndof)), filled and returned.
        threads: threads of a batch (default None: :func:`redmax.get_num_threads`; 1: the calling thread only).
    """
    if f_ext is None and jstate is None and gravity is True:  # the lean tier (redmax.dynamics._single_call)
        rec = lean(model)
        if rec is not None:
            res = rec.rnea(q, qd, qdd) if out is None else rec.rnea(q, qd, qdd, out)
            if res is not NotImplemented:
                return res
    if getattr(model, "uncoupled", None) is not None:  # hyper-reduced coordinates (ModelBuilder.couple)
        return _coupled_out(_coupled.rnea(model, q, qd, qdd, f_ext, jstate, gravity), out)
    try:  # fast path: float64 vectors go straight to the kernel (which checks sizes and finiteness)
        if (f_ext is None and jstate is None and gravity is True and not model.chart_joints.size
                and q.dtype == _F64 and qd.dtype == _F64 and qdd.dtype == _F64
                and q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1):
            Ii, Ff = model.packed
            direct = q.flags.carray and qd.flags.carray and qdd.flags.carray  # the compiled types (see _F64)
            if direct and out is None:
                return (entry(model, rnea_plain, "vvv") or rnea_plain)(Ii, Ff, q, qd, qdd)
            if direct and type(out) is np.ndarray and out.dtype == _F64 and out.ndim == 1 and out.flags.carray:
                (entry(model, rnea_out, "vvvv") or rnea_out)(Ii, Ff, q, qd, qdd, out)
                return out
    except (AttributeError, ValueError, ZeroDivisionError):
        pass  # not arrays, or rejected by the kernel: the checked path below explains the problem
    model = _model(model, "rnea")
    g = _gscale(model, gravity)
    if _is_batch(q, qd, qdd):
        return _batch(model, "rnea", (q, qd, qdd), ("q", "qd", "qdd"), f_ext, jstate, g, out, threads)
    Ii, Ff = model.packed
    q, qd, qdd = _arrays(model, q, qd, qdd)
    tau = _checked(model, rnea_kernel, Ii, Ff, q, qd, qdd, _js(model, jstate), _fext(model, f_ext, q.dtype), g)
    return _fill(model, out, tau, "rnea")


def aba(model, q, qd, tau, f_ext=None, jstate=None, gravity: bool = True, *, out=None, threads=None) -> np.ndarray:
    """Forward dynamics: accelerations (ndof,) for torques ``tau`` (recursive, O(n); supplemental Alg. 6).

    Arguments as :func:`rnea` (batches of (B, ndof) included, ``threads`` for them); ``M`` includes the model's
    armature."""
    if f_ext is None and jstate is None and gravity is True:  # the lean tier (redmax.dynamics._single_call)
        rec = lean(model)
        if rec is not None:
            res = rec.aba(q, qd, tau) if out is None else rec.aba(q, qd, tau, out)
            if res is not NotImplemented:
                return res
    if getattr(model, "uncoupled", None) is not None:  # hyper-reduced coordinates (ModelBuilder.couple)
        return _coupled_out(_coupled.aba(model, q, qd, tau, f_ext, jstate, gravity), out)
    try:
        if (f_ext is None and jstate is None and gravity is True and not model.chart_joints.size
                and q.dtype == _F64 and qd.dtype == _F64 and tau.dtype == _F64
                and q.ndim == 1 and qd.ndim == 1 and tau.ndim == 1):
            Ii, Ff = model.packed
            direct = q.flags.carray and qd.flags.carray and tau.flags.carray  # the compiled types (see _F64)
            if direct and out is None:
                return (entry(model, aba_plain, "vvv") or aba_plain)(Ii, Ff, q, qd, tau)
            if direct and type(out) is np.ndarray and out.dtype == _F64 and out.ndim == 1 and out.flags.carray:
                (entry(model, aba_out, "vvvv") or aba_out)(Ii, Ff, q, qd, tau, out)
                return out
    except (AttributeError, ValueError, ZeroDivisionError):
        pass
    model = _model(model, "aba")
    g = _gscale(model, gravity)
    if _is_batch(q, qd, tau):
        return _batch(model, "aba", (q, qd, tau), ("q", "qd", "tau"), f_ext, jstate, g, out, threads)
    Ii, Ff = model.packed
    q, qd, tau = _arrays(model, q, qd, tau, names=("q", "qd", "tau"))
    qdd = _checked(model, aba_kernel, Ii, Ff, q, qd, tau, _js(model, jstate), _fext(model, f_ext, q.dtype), g)
    return _fill(model, out, qdd, "aba")


def _fill(model, out, res, what):
    if out is None:
        return res
    if res.dtype != _F64:
        raise ModelError(f"{model.name}: {what}: out= takes float64 results only, got {res.dtype}")
    _out(model, out, res.shape, what)[...] = res
    return out


def hybrid_dynamics(model, q, qd, tau, qdd, prescribed, f_ext=None, jstate=None, gravity: bool = True):
    """Recursive hybrid dynamics (Kim & Pollard 2011; supplemental Alg. 6).

    Args:
        tau: (ndof,) torques, used for joints that are not prescribed.
        qdd: (ndof,) accelerations, used for prescribed joints.
        prescribed: (nb,) booleans, one per joint.
    Returns:
        (qdd, tau): full accelerations and torques (ndof,) each.
    """
    if getattr(model, "uncoupled", None) is not None:  # hyper-reduced coordinates (ModelBuilder.couple)
        return _coupled.hybrid_dynamics(model, q, qd, tau, qdd, prescribed, f_ext, jstate, gravity)
    model = _model(model, "hybrid_dynamics")
    q, qd, tau, qdd = _arrays(model, q, qd, tau, qdd, names=("q", "qd", "tau", "qdd"))
    try:
        pres = np.asarray(prescribed, dtype=np.bool_)
    except (TypeError, ValueError):
        raise ModelError(f"{model.name}: prescribed must be {model.nb} booleans, got {prescribed!r}") from None
    if pres.shape != (model.nb,):
        raise ModelError(f"{model.name}: prescribed must have shape ({model.nb},), got {pres.shape}")
    if pres.flags.writeable:  # read-only like the kernels' own "none prescribed": one compiled type for both
        pres = pres.view()
        pres.flags.writeable = False
    Ii, Ff = model.packed
    return _checked(model, hybrid_kernel, Ii, Ff, q, qd, tau, qdd, pres, _js(model, jstate),
                    _fext(model, f_ext, q.dtype), _gscale(model, gravity))


def _of_q(model, q, jstate, plain, kernel, what, out, into=None, threads=None, finite=False):
    """Run a kernel of q alone: the lean entry point for a float64 vector and the default joint state,
    else the converting, checking one (batches included).  A result that is not finite is refused with the DOF
    whose row overflowed; ``finite``: the kernel does not check its result (crba; M^-1 raises on a non-finite
    pivot itself), so the fast path checks it too."""
    try:
        if jstate is None and not model.chart_joints.size and q.dtype == _F64 and q.ndim == 1 and q.flags.carray:
            Ii, Ff = model.packed  # q of the compiled type (see _F64)
            if out is None:
                res = (entry(model, plain, "v") or plain)(Ii, Ff, q)
                if not finite or np.isfinite(res).all():
                    return res
            elif (into is not None and type(out) is np.ndarray and out.dtype == _F64 and out.ndim == 2
                    and out.flags.carray):
                (entry(model, into, "vm") or into)(Ii, Ff, q, out)
                if not finite or np.isfinite(out).all():
                    return out
    except (AttributeError, ValueError, ZeroDivisionError):
        pass  # not an array, or rejected by the kernel: the checked path below names the problem
    model = _model(model, what)
    if _is_batch(q):
        return _batch(model, what, (q,), ("q",), None, jstate, 1.0, out, threads)
    Ii, Ff = model.packed
    (q,) = _arrays(model, q)
    js = _js(model, jstate)
    res = _checked(model, kernel, Ii, Ff, q, js)
    if not np.isfinite(res).all():
        raise ModelError(f"{model.name}: {what}: {singular_inertia_message(model, q.real, js)}")
    return _fill(model, out, res, what)


def crba(model, q, jstate=None, *, out=None, threads=None) -> np.ndarray:
    """Joint-space inertia matrix M(q) (ndof, ndof) by the composite rigid-body algorithm (armature included).

    ``q`` (B, ndof) gives (B, ndof, ndof) (on ``threads`` threads, as :func:`rnea`); ``out`` an optional
    preallocated float64 result."""
    if jstate is None:  # the lean tier (redmax.dynamics._single_call)
        rec = lean(model)
        if rec is not None:
            res = rec.crba(q) if out is None else rec.crba(q, out)
            # the C entry declines a non-finite result itself; the Numba fallback (no rec.W) does not
            if res is not NotImplemented and (getattr(rec, "W", None) is not None or np.isfinite(res).all()):
                return res
    if getattr(model, "uncoupled", None) is not None:  # hyper-reduced coordinates (ModelBuilder.couple)
        return _coupled_out(_coupled.crba(model, q, jstate), out)
    return _of_q(model, q, jstate, crba_plain, crba_kernel, "crba", out, crba_out, threads, finite=True)


def minv(model, q, jstate=None, *, out=None, threads=None) -> np.ndarray:
    """Inverse joint-space inertia M(q)^-1 (ndof, ndof), O(n d + n^2) (notes Algorithm 10, all columns).

    ``q`` (B, ndof) gives (B, ndof, ndof) (on ``threads`` threads, as :func:`rnea`); ``out`` an optional
    preallocated float64 result."""
    if getattr(model, "uncoupled", None) is not None:  # hyper-reduced coordinates (ModelBuilder.couple)
        return _coupled_out(_coupled.minv(model, q, jstate), out)
    return _of_q(model, q, jstate, minv_plain, minv_kernel, "minv", out, threads=threads)


# ------------------------------------------------------------------------------------------------------------
# batches


def _batch(model, what, vs, names, f_ext, jstate, g, out, threads=None):
    """Validate a batch once (shapes, dtypes, finiteness, chart words), run the parallel kernel on ``threads``
    threads (None: :func:`redmax.get_num_threads`), name a failing state."""
    from redmax.dynamics import batched, lanes

    n, nb = model.ndof, model.nb
    raw = [_numeric(v, name, model) for name, v in zip(names, vs, strict=True)]
    for name, a in zip(names, raw, strict=True):  # a 2-D array of the wrong width is the culprit, not its partners
        if a.ndim == 2 and a.shape[1] != n:
            raise ModelError(f"{model.name}: {name} must have shape ({n},) or (B, {n}), got {a.shape}")
    if raw[0].ndim != 2:  # q is a single state: the 2-D partner is the odd one out
        name, a = next((nm, a) for nm, a in zip(names, raw, strict=True) if a.ndim == 2)
        raise ModelError(f"{model.name}: {name} must have shape ({n},) like {names[0]}, got {a.shape} (a batch takes "
                         f"every array as (B, {n}))")
    arrs = []
    for name, a in zip(names, raw, strict=True):
        if a.dtype.kind == "c":
            raise ModelError(f"{model.name}: {what}: batched calls take real (float64) arrays; {name} is complex")
        if a.ndim != 2:
            raise ModelError(f"{model.name}: {name} must have shape (B, {n}) like the batched {names[0]}, got "
                             f"{a.shape}")
        arrs.append(np.ascontiguousarray(a, dtype=np.float64))
    B = arrs[0].shape[0]
    for name, a in zip(names, arrs, strict=True):
        if a.shape[0] != B:
            raise ModelError(f"{model.name}: {name} has {a.shape[0]} states, {names[0]} has {B}")
        if not np.isfinite(a).all():
            k = int(np.flatnonzero(~np.isfinite(a).all(axis=1))[0])
            raise ModelError(f"{model.name}: {name}[{k}] contains NaN or inf")
    JS = _batch_charts(model, jstate, B)
    if f_ext is None:
        F = np.zeros((1, 0, 6))
    else:
        F = np.ascontiguousarray(_numeric(f_ext, "f_ext", model), dtype=np.float64)
        if F.shape == (nb, 6):
            F = F[None]
        if F.ndim != 3 or F.shape[1:] != (nb, 6) or F.shape[0] not in (1, B):
            raise ModelError(f"{model.name}: f_ext must have shape ({nb}, 6) or ({B}, {nb}, 6), got {F.shape}")
        if not np.isfinite(F).all():
            raise ModelError(f"{model.name}: f_ext contains NaN or inf")
    shape = (B, n) if what in ("rnea", "aba") else (B, n, n)
    res = np.empty(shape) if out is None else _out(model, out, shape, what)
    status = np.zeros(B, dtype=np.int64)
    Ii, Ff = model.packed
    ctl, helpers = pool_for(threads, f"{model.name}: {what}: ")
    T = np.empty(batched.TABLE, dtype=np.int64)  # (the chunk functions' view of the arguments)
    lane = lanes.tables(model) if what in ("rnea", "aba") and f_ext is None else None
    if lane is not None:  # fixed, revolute and prismatic joints only: SIMD across states
        C, par, dof, grav = lane
        kern, size, fn = ((lanes.rnea_lanes, lanes.rnea_work_size, lanes.RNEA_LANES_CHUNK) if what == "rnea" else
                          (lanes.aba_lanes, lanes.aba_work_size, lanes.ABA_LANES_CHUNK))
        Wk = np.empty((batched.chunks(-(-B // lanes.LB), helpers + 1), size(nb, n)))
        kern(C, par, dof, g * grav, arrs[0], arrs[1], arrs[2], res, Wk, T, ctl, helpers, fn.address)
        status[:] = ~np.isfinite(res).all(axis=1)
    elif what in ("rnea", "aba"):
        kern, size, fn = ((batched.rnea_batch, rnea_work_size, batched.RNEA_CHUNK) if what == "rnea" else
                          (batched.aba_batch, aba_work_size, batched.ABA_CHUNK))
        Wk = batched.workspaces(B, size(nb, n), helpers + 1)
        kern(Ii, Ff, arrs[0], arrs[1], arrs[2], JS, F, g, res, status, Wk, T, ctl, helpers, fn.address)
    elif what == "crba":
        batched.crba_batch(Ii, Ff, arrs[0], JS, res, status, batched.workspaces(B, crba_work_size(nb, n), helpers + 1),
                           T, ctl, helpers, batched.CRBA_CHUNK.address)
    else:
        batched.minv_batch(Ii, Ff, arrs[0], JS, res, status, batched.workspaces(B, 0, helpers + 1), T, ctl, helpers,
                           batched.MINV_CHUNK.address)
    if status.any():
        k = int(np.flatnonzero(status)[0])
        js = JS[k] if JS.shape[0] > 1 else JS[0]
        why = singular_inertia_message(model, arrs[0][k], js)
        if "regular here" in why:
            why = "the result is not finite although every input is (the inputs are too large: overflow)"
        raise ModelError(f"{model.name}: {what}: state {k} of {B}: {why}")
    return res


def _batch_charts(model, jstate, B) -> np.ndarray:
    """(1, nb) or (B, nb) validated chart words."""
    if jstate is None:
        return np.array(charts_for(model, None), dtype=np.int64).reshape(1, -1)
    raw = np.asarray(jstate)
    if raw.ndim == 1:
        return np.array(check_charts(model, raw), dtype=np.int64).reshape(1, -1)
    if raw.ndim != 2 or raw.shape != (B, model.nb):
        raise ModelError(f"{model.name}: jstate must have shape ({model.nb},) or ({B}, {model.nb}), got {raw.shape}")
    if raw.dtype.kind not in "iu" and not (raw.dtype.kind == "f" and np.isfinite(raw).all()
                                          and np.all(raw == np.round(raw))):
        raise ModelError(f"{model.name}: jstate must hold integer chart words, got dtype {raw.dtype}")
    js = np.ascontiguousarray(raw, dtype=np.int64)
    for i in model.chart_joints:  # every distinct word of a chart joint, checked once
        for w in np.unique(js[:, i]):
            row = model.jstate0.copy()
            row[i] = w
            check_charts(model, row)
    return js


def _coupled_out(res, out):
    """The result of a hyper-reduced model's call, written into ``out`` when one is given."""
    if out is None:
        return res
    out[...] = res
    return out


def minv_product(model, q, X, jstate=None, Pr=None, Pm=None) -> np.ndarray:
    """Solve ``(M + P) Y = X`` by recursive forward dynamics (notes Alg. 10); X is (ndof,) or (ndof, k).

    Args:
        Pr: optional (ndof,) reduced diagonal term ``h D_r - h^2 K_r`` (preconditioner).
        Pm: optional (nb, 6, 6) maximal blocks ``h D_m - h^2 K_m`` in body frames.
    """
    if getattr(model, "uncoupled", None) is not None:  # hyper-reduced coordinates (ModelBuilder.couple)
        return _coupled.minv_product(model, q, X, jstate, Pr, Pm)
    model = _model(model, "minv_product")
    (q,) = _arrays(model, q)
    Xa = _numeric(X, "X", model)
    vec = Xa.ndim == 1
    if Xa.ndim not in (1, 2) or Xa.shape[0] != model.ndof:
        raise ModelError(f"{model.name}: X must have shape ({model.ndof},) or ({model.ndof}, k), got {Xa.shape}")
    X2 = np.ascontiguousarray(Xa.reshape(model.ndof, -1), dtype=np.result_type(Xa, q.dtype))
    if not np.all(np.isfinite(X2)):
        raise ModelError(f"{model.name}: X contains NaN or inf")
    Prv = np.zeros(model.ndof) if Pr is None else np.ascontiguousarray(_numeric(Pr, "Pr", model), dtype=float)
    if Prv.shape != (model.ndof,) or not np.all(np.isfinite(Prv)):
        raise ModelError(f"{model.name}: Pr must be a finite ({model.ndof},) array, got shape {Prv.shape}")
    if model.armature is not None:  # armature is a diagonal term of M itself
        Prv = Prv + model.armature
    if Pm is None:
        Pmj = np.zeros((model.nb, 6, 6))
    else:
        Pm = np.asarray(_numeric(Pm, "Pm", model), dtype=float)
        if Pm.shape != (model.nb, 6, 6) or not np.all(np.isfinite(Pm)):
            raise ModelError(f"{model.name}: Pm must be a finite ({model.nb}, 6, 6) array, got shape {Pm.shape}")
        Pmj = np.einsum("bki,bkl,blj->bij", model.Ad_bj, Pm, model.Ad_bj)
    js = _js(model, jstate)
    try:
        Y = minv_product_kernel(model.parent, model.jtype, model.idx, model.jp_off, model.jparam, model.E_pj0,
                                model.M_joint, q.astype(X2.dtype), js, Prv, Pmj, X2)
    except np.linalg.LinAlgError:
        why = singular_inertia_message(model, q.real, js)
        if Pr is not None or Pm is not None:
            why = f"M + P is singular at this configuration (check Pr and Pm; M alone: {why})"
        raise ModelError(f"{model.name}: minv_product: {why}") from None
    if not np.isfinite(Y).all():
        raise ModelError(f"{model.name}: minv_product: the result is not finite although every input is (the inputs "
                         "are too large: overflow)")
    return Y[:, 0] if vec else Y


_coupled.bind(rnea=rnea, crba=crba)
# tangent (body-twist) rates of spherical and free joints; the derivative functions themselves are
# exported by the top-level package (they call this package's checked entry points, so importing them here
# would be an import cycle)
from redmax.dynamics.tangent import model_rates, tangent_map, tangent_rates  # noqa: E402

__all__ += ["model_rates", "tangent_map", "tangent_rates"]
