"""How ``run_speed`` measures inside a worker: memory readings (RSS, peak as
``ru_maxrss`` and ``VmHWM``), wall and CPU time of a run (optionally under
cProfile; the median of repeats), and the result record of an inference or
training run.
"""
import math
import resource
import sys
import time
from typing import Dict, Optional

from .speed_pairs import n_words


def _status_mb(field: str) -> Optional[float]:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return None


def memory_now() -> Dict[str, Optional[float]]:
    """Current RSS (MiB), and the peak so far both as ru_maxrss and VmHWM."""
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # bytes there, KiB on Linux
        maxrss /= 1024.0
    return {
        "rss_mb": _status_mb("VmRSS"),
        "maxrss_mb": maxrss / 1024.0,
        "hwm_mb": _status_mb("VmHWM"),
    }


def timed(fn):
    """Run fn(); return (result, wall seconds, CPU seconds of this process)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def maybe_profile(profile_out: Optional[str], fn):
    """timed(fn), under cProfile when profile_out is given (stats written there)."""
    if not profile_out:
        return timed(fn)
    import cProfile

    prof = cProfile.Profile()
    result = timed(lambda: prof.runcall(fn))
    prof.dump_stats(profile_out)
    return result


def repeat(args, fn, setup=None):
    """Time fn() args.repeats times (setup() before each, untimed); the first
    run is profiled when asked. Returns (median wall, its CPU time, all walls)."""
    runs = []
    for k in range(max(1, args.repeats)):
        if setup is not None:
            setup()
        _, wall, cpu = maybe_profile(args.profile_out if k == 0 else None, fn)
        runs.append((wall, cpu))
    ordered = sorted(runs)
    wall, cpu = ordered[len(ordered) // 2]
    return wall, cpu, [w for w, _ in runs]


def infer_result(pairs, batch_size, wall, cpu, mem_load, mem_before, extra=None):
    """The record of one inference run (throughput, times, memory), plus extra."""
    mem_after = memory_now()
    out = {
        "n_pairs": len(pairs),
        "n_words": n_words(pairs),
        "batch_size": batch_size,
        "n_batches": math.ceil(len(pairs) / batch_size),
        "seconds": wall,
        "cpu_seconds": cpu,
        "pairs_per_s": len(pairs) / wall,
        "words_per_s": n_words(pairs) / wall,
        **memory_fields(mem_load, mem_before, mem_after),
    }
    out.update(extra or {})
    return out


def memory_fields(mem_load, mem_before, mem_after):
    """The memory part of a result record (MiB): after loading, before and after the run."""
    return {
        "rss_after_load_mb": mem_load["rss_mb"],
        "rss_before_run_mb": mem_before["rss_mb"],
        "peak_before_run_mb": mem_before["maxrss_mb"],
        "peak_rss_mb": mem_after["maxrss_mb"],
        "peak_hwm_mb": mem_after["hwm_mb"],
    }


def train_result(pairs, batch_size, wall, cpu, mem_load, mem_before, losses, extra=None):
    """The record of one training epoch (times per epoch and step, memory, losses), plus extra."""
    mem_after = memory_now()
    steps = math.ceil(len(pairs) / batch_size)
    out = {
        "n_examples": len(pairs),
        "n_words": n_words(pairs),
        "batch_size": batch_size,
        "steps": steps,
        "seconds_per_epoch": wall,
        "cpu_seconds": cpu,
        "seconds_per_step": wall / steps,
        "examples_per_s": len(pairs) / wall,
        "losses": losses,
        **memory_fields(mem_load, mem_before, mem_after),
    }
    out.update(extra or {})
    return out


def ratio(a, b):
    """a / b, or None when either is missing or zero."""
    return a / b if a and b else None
