"""Lazy package exports: a package names what it exports and the module that
defines each, and the module is imported on first access (PEP 562). The
pair transformer and the components pull in spacy-transformers and
transformers, which a help text or a data converter does not need; spaCy finds
the registered names through the entry points (``setup.cfg``), not through
these imports.

    __getattr__, __dir__ = lazy_exports(__name__, {"ParaphraseSpans": ".component", ...})
"""
import importlib
from typing import Callable, Dict, List, Tuple


def lazy_exports(package: str, exports: Dict[str, str]) -> Tuple[Callable[[str], object], Callable[[], List[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``exports`` maps a name to
    the module (relative, e.g. ``".component"``) it is imported from."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(exports[name], package)
        value = module if name == exports[name].lstrip(".") else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> List[str]:
        return sorted(set(namespace) | set(exports))

    return __getattr__, __dir__
