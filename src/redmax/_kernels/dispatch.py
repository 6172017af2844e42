"""Registries of element kinds (joint families, constraint types) and the compiled dispatch written from them.

Numba dispatches on integer type codes, so a registry's kernels are reached through a function
``name(code, args)`` that is the chain ``if code == <kind's code>: return <kind's kernel>(args)`` over the
registered kinds, then a default.  :func:`write_dispatcher` writes that function from the registry when the
registry's module is imported (the text is attributed to that module's file, and the kernel cache stamps every
caller with it: ``__redmax_source__``), so adding a kind never edits a dispatcher.  :func:`registered` reads a
registry: the built-in entries (``"module:Class"``, one line each) and the kinds other packages declare as
entry points of the registry's group.

:func:`lean_gate` keeps the joint families a model does not have out of its compiled kernels: the packed ints
``Ii`` of a model whose joints are all fixed, revolute or prismatic are writeable (``redmax.model.layout.pack``),
every other model's are read-only, and a gated call compiles the other families only for the read-only type.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Sequence

from redmax._jit import njit
from redmax.errors import RedmaxWarning

__all__ = ["lean_gate", "registered", "write_dispatcher"]


def _load(entry: str):
    module, name = entry.split(":")
    return getattr(importlib.import_module(module), name)


def registered(entries: Sequence[str], group: str, check: Callable[[tuple], None]) -> tuple:
    """The classes of a registry: ``entries`` (``"module:Class"``) then those of the entry points of ``group``
    (sorted by name).  ``check(classes)`` raises for a registry that cannot be served; the built-in entries must
    pass it, and an entry point that fails to import or to pass it is left out with a ``RedmaxWarning`` naming it
    (a broken extension must not break ``import redmax``)."""
    from importlib.metadata import entry_points

    built_in = tuple(_load(e) for e in entries)
    check(built_in)
    out: list = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            cls = ep.load()
            check((*built_in, *out, cls))
        except Exception as exc:
            warnings.warn(f"{group} entry point {ep.name!r} ({ep.value}) is not used: {exc}", RedmaxWarning,
                          stacklevel=2)
            continue
        out.append(cls)
    return (*built_in, *out)


def write_dispatcher(name: str, args: str, cases: Sequence[tuple], default: str, doc: str, file: str,
                     module: str, inline: str = "always"):
    """A Numba function ``name(code, <args>)``: for each ``(code, label, kernel)`` of ``cases`` (kernel None:
    skipped) ``if code == code: return kernel(<args>)``, then ``return <default>``.  ``file``, ``module``: where
    the text is attributed (the registry's module).  ``inline``: Numba's option ("always": no compile level of its
    own, as a hand-written chain)."""
    names: dict = {}
    lines = [f"def {name}(code, {args}):"]
    for i, (code, label, kernel) in enumerate(cases):
        if kernel is not None:
            names[f"_k{i}"] = kernel
            lines += [f"    if code == {int(code)}:  # {label}", f"        return _k{i}({args})"]
    lines.append(f"    return {default}")
    text = "\n".join(lines) + "\n"
    exec(compile(text, file, "exec"), names)  # our own text, written from the registry
    fn = names[name]
    fn.__module__ = module
    fn.__doc__ = doc
    fn.__redmax_source__ = text
    return njit(cache=True, inline=inline)(fn)


def lean_gate(real, name: str, *, stub=None, prepend: bool = False):
    """A Numba-callable ``name(tag, ...)`` that calls ``real`` where the array ``tag`` is read-only and ``stub``
    where it is writeable: the code reached through ``real`` is then not compiled at all for the writeable type.

    Two tags use it.  The packed ints ``Ii`` of a lean model (joints all fixed, revolute or prismatic; see
    ``redmax.model.layout``) are writeable: the joint dispatch over every registered family, the larger part of
    the compile time of the kernels that call it (55 s -> 26 s for the first rnea/aba/crba of a URDF robot), is
    compiled only for models that need it.  A force program's header ``hdr`` is writeable when it holds no force
    (``redmax.forces.program``): the force kernels are compiled only for models with forces.

    ``real`` is a Numba dispatcher; ``prepend``: the tag is an extra first argument named ``Ii`` (else ``real``'s
    first argument is the tag).  ``stub(...)`` (``real``'s arguments) answers for the writeable type, where
    ``real`` is never reached; the default raises (a tag that does not match its data: a packing error, never a
    user's).  The choice is made on the argument's type when the caller is typed (a Numba ``overload``), so each
    of the two array types compiles only its own branch; called from Python it chooses the same way.  A writeable array
    passed where a kernel holds a read-only specialisation reuses it (``redmax._jit``): the general branch, always
    correct."""
    import inspect

    from numba.extending import overload

    params = list(inspect.signature(real.py_func).parameters)
    outer = ["Ii", *params] if prepend else params
    a, b = ", ".join(outer), ", ".join(params)
    text = (f"def {name}({a}):\n    return (_stub if {outer[0]}.flags.writeable else _real)({b})\n"
            f"def _typer({a}):\n    return _real_impl if not {outer[0]}.mutable else _stub_impl\n"
            f"def _real_impl({a}):\n    return _real({b})\n"
            f"def _stub_impl({a}):\n    return _stub({b})\n")
    names = {"__name__": real.py_func.__module__, "_real": real,
             "_stub": stub if stub is not None else _packing_error}
    exec(compile(text, inspect.getsourcefile(real.py_func), "exec"), names)  # our own text
    fn = names[name]
    fn.__module__ = real.py_func.__module__
    fn.__doc__ = f"{real.py_func.__name__} where ``{outer[0]}`` is read-only (see redmax._kernels.dispatch.lean_gate)."
    # the kernel cache stamps callers with this text and with the code that turns it into a gate (its options)
    fn.__redmax_source__ = text + "\n" + inspect.getsource(lean_gate) + inspect.getsource(_packing_error.py_func)
    # (inline="never": an inlined overload in the Euler loop miscompiled its implicit-Coriolis step, Numba 0.68)
    overload(fn, inline="never")(names["_typer"])
    return fn


@njit(cache=True)
def _packing_error(*args):
    raise ValueError("redmax: code for a joint family or force that the model was packed without (a writeable "
                     "packed array where the model's is read-only)")
