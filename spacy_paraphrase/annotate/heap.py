"""The native memory of a long run: what the C heap and oneDNN keep
(docs/annotate.md, "Memory over a long run").

Two things outside Python made resident memory grow with the corpus although
no pair's data was kept:

- **glibc's heap.** ``malloc`` serves a block of at least the *mmap
  threshold* (128 KiB at start) with a mapping of its own, unmapped when
  freed, but each such free raises the threshold to the block's size (up to
  32 MiB). After the first batches the forward pass's tensors (a few MiB,
  another size with every batch's sequence length) all come from the heap,
  which fragments: with MiniLM the heap's free space grew by about 150 KB per
  pair. ``bound_native_memory`` fixes the threshold (``mallopt``, which also
  stops its adjustment), so that large blocks keep their own mappings; after
  each zone ``trim_heap`` (``malloc_trim``) returns the heap's free pages.
- **oneDNN's primitive cache.** PyTorch runs some CPU operations (GELU) with
  oneDNN, which compiles a kernel for every new tensor shape and caches up to
  1,024 of them: a new entry for about every batch, since batches have
  sequence lengths of their own. ``bound_native_memory`` caps the cache
  (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``, read by oneDNN when it first runs a
  kernel in the process: set before the first forward pass).

Both settings go into ``os.environ`` too (unless set there already), so that
processes started from this one (``--n-process``) inherit them. Elsewhere than
glibc (macOS, musl) the heap settings do nothing.
"""
import ctypes
import ctypes.util
import os
from typing import Optional

# Bytes from which a block gets a mapping of its own (glibc's initial value, fixed).
MMAP_THRESHOLD = 128 * 1024
# Kernels oneDNN keeps (its default: 1,024).
ONEDNN_CACHE_CAPACITY = 16
MMAP_THRESHOLD_ENV = "MALLOC_MMAP_THRESHOLD_"
ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def _libc() -> Optional[ctypes.CDLL]:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.malloc_trim.restype = ctypes.c_int
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.mallopt.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def bound_native_memory() -> bool:
    """Fix glibc's mmap threshold and cap oneDNN's primitive cache (module
    doc) for this process and those it starts; a value already in the
    environment is kept. False where there is no ``mallopt`` (not glibc)."""
    os.environ.setdefault(ONEDNN_CACHE_ENV, str(ONEDNN_CACHE_CAPACITY))
    threshold = os.environ.setdefault(MMAP_THRESHOLD_ENV, str(MMAP_THRESHOLD))
    if _LIBC is None:
        return False
    try:
        value = int(threshold)
    except ValueError:
        value = MMAP_THRESHOLD
    return bool(_LIBC.mallopt(_M_MMAP_THRESHOLD, value))


def trim_heap() -> bool:
    """Return the heap's free pages to the system; False where there is no
    ``malloc_trim`` (not glibc)."""
    if _LIBC is None:
        return False
    _LIBC.malloc_trim(0)
    return True
