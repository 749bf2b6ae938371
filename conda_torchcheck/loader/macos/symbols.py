"""The symbol check of a two-level namespace: every undefined symbol looked up in the export trie of the dylib
its library ordinal names, as dyld binds it."""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.loader.macos.engine import Image, MacLoad
from conda_torchcheck.records import Record

# special library ordinals (<mach-o/nlist.h>): the image itself, flat lookup, the main executable
_SELF, _DYNAMIC_LOOKUP, _EXECUTABLE = 0, 0xFE, 0xFF


class SymbolMiss(Record):
    """An undefined symbol that the dylib its two-level ordinal names does not export (dyld: Symbol not found)."""

    __slots__ = ("name", "required_by", "expected_in", "library")

    def __init__(self, name: str, required_by: Path, expected_in: Path, library: str) -> None:
        self.name = name
        self.required_by = required_by
        self.expected_in = expected_in
        self.library = library  # the load command's name (@rpath/libc10.dylib)

    @property
    def message(self) -> str:
        # dyld4 (Loader.cpp) prints "<UUID> path" for both images; the UUID is left out here
        return (
            f"Symbol not found: {self.name}\n  Referenced from: {self.required_by}\n"
            f"  Expected in:     {self.expected_in}"
        )


def check_symbols(load: MacLoad, limit: int = 200) -> list[SymbolMiss]:
    """Every non-weak undefined symbol of every loaded image, looked up in the export trie of the dylib its
    library ordinal names (and what that dylib re-exports), as dyld binds a two-level namespace image.

    Symbols bound to the shared cache (system dylibs: no file here), flat-namespace lookups (Python's C API in
    extension modules) and weak references are not judged.
    """
    from conda_torchcheck.binaries.macho import read_exported, read_exports, read_undefined

    by_path: dict[str, Image] = {str(img.path): img for img in load.dyld.loaded}

    def resolved(img: Image, name: str) -> Image | None:
        for dep in img.module.dependencies:
            if dep.name == name and dep.resolution is not None and dep.resolution.path is not None:
                return by_path.get(str(dep.resolution.path))
        return None

    # (binding image, symbol, load command) grouped by the image the symbols are bound to
    wanted: dict[str, list[tuple[Image, str, str]]] = {}
    for img in load.dyld.loaded:
        sl = img.slice
        if sl is None or not sl.dylibs or sl.symtab is None:
            continue
        undefined = read_undefined(img.path, sl)
        if not isinstance(undefined, tuple):
            continue
        for name, ordinal, weak in undefined:
            if weak or ordinal in (_SELF, _DYNAMIC_LOOKUP, _EXECUTABLE) or ordinal > len(sl.dylibs):
                continue
            ref = sl.dylibs[ordinal - 1]
            if ref.weak:
                continue
            target = resolved(img, ref.name)
            if target is None:
                continue  # in the shared cache, or missing (TC450 reports the missing dylib)
            wanted.setdefault(str(target.path), []).append((img, name, ref.name))

    def lookup(target: Image, names: set[str], depth: int = 0) -> set[str]:
        """The names ``target`` exports itself or through its LC_REEXPORT_DYLIB dylibs."""
        if target.slice is None or not names:
            return set()
        # a few hundred names: one trie walk each; thousands (libtorch_python → libtorch_cpu): list the trie once
        if len(names) > 512:
            listed = read_exports(target.path, target.slice)
            got = frozenset(names & listed) if isinstance(listed, frozenset) else listed
        else:
            got = read_exported(target.path, target.slice, names)
        if not isinstance(got, frozenset):
            return set(names)  # an export trie that cannot be read proves nothing missing: judge nothing
        found = set(got)
        if depth < 8:
            for ref in target.slice.dylibs:
                if ref.kind == "reexport" and names - found:
                    inner = resolved(target, ref.name)
                    if inner is not None:
                        found |= lookup(inner, names - found, depth + 1)
        return found

    misses: list[SymbolMiss] = []
    for key, uses in wanted.items():
        target = by_path[key]
        found = lookup(target, {n for _i, n, _r in uses})
        for img, name, ref_name in uses:
            if name not in found:
                misses.append(SymbolMiss(name, img.path, target.path, ref_name))
                if len(misses) >= limit:
                    return misses
    return misses
