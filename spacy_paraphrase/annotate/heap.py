"""Giving the memory a run has freed back to the operating system.

glibc's ``malloc`` keeps freed memory in its heaps for later use; after the
many short-lived allocations of a zone of pairs (pair Docs, tensors, records
of varying sizes) the heaps are fragmented and resident memory creeps up with
the corpus although nothing is kept. ``malloc_trim(0)`` after each zone
returns the free pages (docs/annotate.md, "Speed and memory"). Elsewhere than
glibc (macOS, musl) it does nothing.
"""
import ctypes
import ctypes.util
from typing import Callable, Optional


def _malloc_trim() -> Optional[Callable[[int], int]]:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def trim_heap() -> bool:
    """Return the heap's free pages to the system; False where there is no
    ``malloc_trim`` (not glibc)."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
