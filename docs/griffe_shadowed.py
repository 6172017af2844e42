"""A griffe extension for the API reference: functions that share their name with a submodule of their package.

``redmax.dynamics`` defines ``rnea``, ``aba``, ``crba`` and ``minv`` in its ``__init__.py`` and has submodules of
the same names. At run time the functions win (they are defined after the imports); griffe's static analysis lets
the submodules win. This extension gives the functions back their place, and points the aliases of them (such as
``redmax.rnea``) at the functions, so that ``::: redmax.rnea`` documents the function that ``rm.rnea`` is.
"""

from __future__ import annotations

import griffe


class ShadowedFunctions(griffe.Extension):
    def __init__(self) -> None:
        super().__init__()
        self._functions: list[griffe.Function] = []

    def on_function_instance(self, *, func: griffe.Function, **kwargs) -> None:
        if func.parent is not None and func.parent.is_module:
            self._functions.append(func)

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        restored = {}
        for func in self._functions:
            module = func.parent
            member = module.members.get(func.name)
            if member is not None and member is not func and not member.is_alias and member.is_module:
                module.members[func.name] = func
                restored[func.path] = func
        if restored:
            _retarget(pkg, restored, set())

    on_package_loaded = on_package  # the name of the hook in older griffe releases


def _retarget(obj, restored: dict, seen: set) -> None:
    """Point every alias below ``obj`` whose target path is a restored function at that function."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    for member in list(obj.members.values()):
        if member.is_alias:
            if member.target_path in restored:
                member.target = restored[member.target_path]
        elif member.is_module or member.is_class:
            _retarget(member, restored, seen)
