"""The native memory of a long run: what the C heap and oneDNN keep, and what
it costs in speed (docs/annotate.md, "Memory over a long run").

Two things outside Python made resident memory grow with the corpus although
no pair's data was kept:

- **glibc's heap.** ``malloc`` serves a block of at least the *mmap
  threshold* (128 KiB at start) with a mapping of its own, unmapped when
  freed, but each such free raises the threshold to the block's size (up to
  32 MiB). After the first batches the forward pass's tensors (a few MiB,
  another size with every batch's sequence length) come from the heap, whose
  free space, left in the middle of it, fragments and stays resident.
  ``bound_native_memory`` fixes the threshold (``mallopt``, which also stops
  its adjustment) as the run's *heap policy* says, and after each zone
  ``trim_heap`` (``malloc_trim``) gives the heap's free pages back.
- **oneDNN's primitive cache.** PyTorch runs some CPU operations (GELU) with
  oneDNN, which compiles a kernel for every new tensor shape and caches up to
  1,024 of them: a new entry for about every batch, since batches have
  sequence lengths of their own. ``bound_native_memory`` caps the cache
  (``ONEDNN_PRIMITIVE_CACHE_CAPACITY``, read by oneDNN when it first runs a
  kernel in the process: set before the first forward pass).

The heap policies (``HEAP_POLICIES``):

- ``fast`` (the default): blocks below 32 MiB (glibc's own maximum, fixed)
  come from the heap and are used again batch after batch, and the heap keeps
  up to 64 MiB of free space at its top (the *trim threshold*) until the
  zone ends and it is trimmed: the speed of a plain ``nlp.pipe``; free blocks wait in the heap until the
  zone ends, a higher peak (a few hundred MiB with MiniLM or
  deberta-v3-large), flat over a long run all the same.
- ``lean``: every block of 128 KiB or more gets a mapping of its own, given
  back as soon as it is freed: the least resident memory, but each such
  block's pages are faulted in and zeroed again by the kernel, which costs
  a fifth to a quarter of a run's time on a CPU, with MiniLM and with
  deberta-v3-large alike. The heap keeps at most 128 KiB free at its top
  (glibc's start value, set so that a switch from ``fast`` drops fast's).

A one-off step runs under a policy of its own with ``heap_policy`` (a
context), which gives the process back the policy it ran with before.

Both are measured in docs/annotate.md ("Memory over a long run") and
docs/paper-model.md ("The laptop budget").

These settings go into ``os.environ`` too, so that processes started from this
one (``--n-process``) inherit them; a value the user put there is kept.
Elsewhere than glibc (macOS, musl) the heap settings do nothing.
"""
import contextlib
import ctypes
import ctypes.util
import os
from typing import Dict, Iterator, Optional

HEAP_POLICIES = ("fast", "lean")
DEFAULT_HEAP_POLICY = "fast"
# Kernels oneDNN keeps (its default: 1,024).
ONEDNN_CACHE_CAPACITY = 16
ONEDNN_CACHE_ENV = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
MMAP_THRESHOLD_ENV = "MALLOC_MMAP_THRESHOLD_"
TRIM_THRESHOLD_ENV = "MALLOC_TRIM_THRESHOLD_"
# mallopt's parameter numbers (malloc.h), by the environment variable glibc reads for each.
_MALLOPT = {MMAP_THRESHOLD_ENV: -3, TRIM_THRESHOLD_ENV: -1}
# Bytes, by policy: from which a block gets a mapping of its own, and the free space
# the heap may keep at its top (the trim threshold; lean: glibc's own start value).
POLICY_SETTINGS: Dict[str, Dict[str, int]] = {
    "fast": {MMAP_THRESHOLD_ENV: 32 * 2 ** 20, TRIM_THRESHOLD_ENV: 64 * 2 ** 20},
    "lean": {MMAP_THRESHOLD_ENV: 128 * 2 ** 10, TRIM_THRESHOLD_ENV: 128 * 2 ** 10},
}
_SET_HERE: Dict[str, str] = {}  # what this module put in os.environ (a user's own value is kept)
_policy: Optional[str] = None  # the policy this process runs with (None: glibc's own)


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


def check_heap_policy(policy: str) -> str:
    if policy not in HEAP_POLICIES:
        raise ValueError(f"heap policy {policy!r}: one of {', '.join(HEAP_POLICIES)}")
    return policy


def _setting(name: str, value: str) -> str:
    """``value`` into ``os.environ[name]`` unless the user set it there: the value in force."""
    current = os.environ.get(name)
    if current is None or current == _SET_HERE.get(name):
        os.environ[name] = _SET_HERE[name] = value
        return value
    return current


def bound_native_memory(policy: str = DEFAULT_HEAP_POLICY) -> bool:
    """Cap oneDNN's primitive cache and set glibc's heap as ``policy`` says
    (module doc), for this process and those it starts; a value the user
    set in the environment is kept. False where there is no ``mallopt``
    (not glibc)."""
    global _policy
    settings = POLICY_SETTINGS[check_heap_policy(policy)]
    _policy = policy
    os.environ.setdefault(ONEDNN_CACHE_ENV, str(ONEDNN_CACHE_CAPACITY))
    applied = {name: _setting(name, str(value)) for name, value in settings.items()}
    if _LIBC is None:
        return False
    ok = True
    for name, text in applied.items():
        try:
            value = int(text)
        except ValueError:
            value = settings[name]
        ok = bool(_LIBC.mallopt(_MALLOPT[name], value)) and ok
    return ok


def policy_in_force() -> Optional[str]:
    """The heap policy this process last set (None: none yet, glibc's own)."""
    return _policy


@contextlib.contextmanager
def heap_policy(policy: str) -> Iterator[None]:
    """Run the block under ``policy`` (``bound_native_memory``), then give
    the process back the policy it ran with before, its free pages trimmed.
    Where none was set before, that is ``DEFAULT_HEAP_POLICY``: glibc's own
    sliding threshold cannot be set back once ``mallopt`` fixed it, and
    ``fast`` runs at its speed. For a one-off step (``import-model``) whose
    policy must not stay with the caller's later work."""
    before = policy_in_force()
    bound_native_memory(policy)
    try:
        yield
    finally:
        bound_native_memory(before or DEFAULT_HEAP_POLICY)
        trim_heap()


def trim_heap() -> bool:
    """Return the heap's free pages to the system; False where there is no
    ``malloc_trim`` (not glibc)."""
    if _LIBC is None:
        return False
    _LIBC.malloc_trim(0)
    return True
