"""The symbol check: every undefined symbol of a dlopen's new objects looked up in that dlopen's scope, the
way ld.so does (hash table, then the version of the symbol found)."""

from __future__ import annotations

from pathlib import Path

from conda_torchcheck.binaries.elf import SymbolRef, Symbols, Unreadable, Wanted, gnu_hash, read_symbols
from conda_torchcheck.lazy_re import LazyPattern
from conda_torchcheck.loader.linux.engine import LinuxLoad, LoadedObject, LoadStep
from conda_torchcheck.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class SymbolMiss(Record):
    """An undefined symbol that no object in the lookup scope defines (``undefined symbol: X``)."""

    __slots__ = ("name", "version", "version_file", "required_by", "step", "scope")

    def __init__(
        self,
        name: str,
        version: str | None,
        version_file: str | None,
        required_by: Path,
        step: str,
        scope: tuple[Path, ...],
    ) -> None:
        self.name = name
        self.version = version
        self.version_file = version_file
        self.required_by = required_by
        self.step = step
        self.scope = scope


_PYTHON_API = (b"Py", b"_Py")


def symbols_of(obj: LoadedObject) -> Symbols | Unreadable | None:
    if obj.symbols is None and obj.elf is not None:
        obj.symbols = read_symbols(obj.elf)
    return obj.symbols


def check_symbols(load: LinuxLoad, steps: Iterable[LoadStep] | None = None) -> list[SymbolMiss]:
    """Every non-weak undefined symbol of every object mapped by a dlopen, looked up in that dlopen's scope:
    the global scope (executable, its libraries, LD_PRELOAD, RTLD_GLOBAL dlopens before it) then the dlopen's
    own breadth-first closure. Python's C API is taken as provided when the interpreter could not be read.

    Each reference is looked up the way ld.so does: its hash (computed once) through each scope object's hash
    table in turn, its version checked only on the symbol found, so no object's whole table is read."""
    ldso = load.ldso
    symbols_of = ldso.files.symbols_of
    python_unknown = ldso.main is None or ldso.main.elf is None or ldso.main.elf.tables.symtab is None
    misses: list[SymbolMiss] = []
    global_scope: list[LoadedObject] = []
    hashes: dict[bytes, int] = {}
    for step in steps if steps is not None else ldso.steps:
        if step.root is None:
            continue
        scope = list(global_scope)
        for obj in step.searchlist:
            if obj not in scope:
                scope.append(obj)
        if not step.failed:
            # each new object's references, gathered at C speed; who asked for one is found again only for
            # the few that a check needs it for (a miss, a reference judged against an assumed library)
            required: list[tuple[LoadedObject, dict[tuple[bytes, str | None], None]]] = []
            for obj in step.new_objects:
                syms = symbols_of(obj)
                if isinstance(syms, Symbols):
                    required.append((obj, syms.required()))
            remaining = set().union(*(keys for _obj, keys in required))

            def wanted(key: tuple[bytes, str | None], required=required) -> list[LoadedObject]:
                return [obj for obj, keys in required if key in keys]

            if python_unknown:
                remaining = {k for k in remaining if not k[0].startswith(_PYTHON_API)}
            assumed = {d.name for o in scope for d in o.module.dependencies if d.resolution and d.resolution.assumed}
            if assumed:
                # libraries of a machine not examined here may define anything: only a reference versioned
                # against a library that was examined can still be judged
                # torch's own symbols (c10::, at::, torch::, caffe2 flags) are defined by torch's libraries only,
                # which are the env's: no machine library can supply one that they lack
                remaining = {
                    k
                    for k in remaining
                    if _TORCH_OWN.match(k[0]) or all(_versioned_from_known(o, k[0], assumed) for o in wanted(k))
                }
            unhashed = {name for name, _version in remaining if name not in hashes}
            hashes.update(zip(unhashed, map(gnu_hash, unhashed)))
            asked = [(name, version, hashes[name]) for name, version in remaining]
            pending: dict[int, list[Wanted]] = {entry[2] | 1: [entry] for entry in asked}
            if len(pending) < len(asked):  # names of one hash (bit 0 aside): each list holds all of them, in order
                lost: dict[int, list[Wanted]] = {}
                for entry in asked:
                    if pending[entry[2] | 1][0] is not entry:
                        lost.setdefault(entry[2] | 1, []).append(entry)
                for key, entries in lost.items():
                    pending[key] = entries + pending[key]
            for obj in scope:
                if not pending:
                    break
                syms = symbols_of(obj)
                if isinstance(syms, Symbols):
                    for entry in syms.defined_among(pending):
                        entries = pending[entry[2] | 1]
                        if len(entries) == 1:
                            del pending[entry[2] | 1]
                        else:
                            entries.remove(entry)
            remaining = {(n, v) for entries in pending.values() for n, v, _h in entries}
            scope_paths = tuple(o.path for o in scope)
            for name, version in sorted(remaining, key=lambda k: (k[0], k[1] or "")):
                for obj in wanted((name, version)):
                    syms = symbols_of(obj)
                    ref = SymbolRef(*syms.ref_of(name, version, any_version=False))  # type: ignore[union-attr,misc]
                    misses.append(
                        SymbolMiss(ref.text, ref.version, ref.version_file, obj.path, step.label, scope_paths)
                    )
                    obj.module.extra.setdefault("undefined_symbols", []).append(
                        {"name": ref.text, "version": ref.version, "from": ref.version_file}
                    )
        if step.rtld_global and not step.failed:
            for obj in step.searchlist:
                if obj not in global_scope:
                    global_scope.append(obj)
    return misses


#: a symbol of torch's own C++ namespaces (a nested name, vtable, typeinfo) or C exports: only torch defines them
#: (compiled on first use: only a scope with an assumed library asks; `tree` and most checks never do)
_TORCH_OWN = LazyPattern(rb"_Z(?:T[VIS])?NK?(?:3c10|2at|5torch|6caffe2)|FLAGS_caffe2|aoti_torch_")  # type: ignore[arg-type]


def _versioned_from_known(obj: LoadedObject, name: bytes, assumed: set[str]) -> bool:
    syms = obj.symbols  # read by check_symbols, as every new object's
    if not isinstance(syms, Symbols):
        return False
    ref = syms.ref_of(name)
    return ref is not None and ref[2] is not None and ref[2] not in assumed
