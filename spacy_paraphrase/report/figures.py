"""The report's figures, drawn by matplotlib as inline SVG (no files, no
scripts: the page opens offline)."""
import io
import re
from typing import Dict, List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text (searchable, small)
matplotlib.rcParams["svg.hashsalt"] = "spacy-paraphrase"  # same figure, same bytes
COLOR = "#1f6feb"
MAX_GROUPS = 25


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buffer.getvalue()
    # namespaces only: the RDF metadata block is of no use inline
    return re.sub(r"<metadata>.*?</metadata>\s*", "", text[text.index("<svg"):], flags=re.S)


def _errors(rows: Sequence[Dict[str, object]]):
    low = [r["rate"] - r["low"] if r["low"] is not None else 0.0 for r in rows]
    high = [r["high"] - r["rate"] if r["high"] is not None else 0.0 for r in rows]
    return [low, high]


def rate_by_group(rows: List[Dict[str, object]], title: str, overall: Optional[float]) -> str:
    """Dot per group with its 95% interval (the MAX_GROUPS groups with most
    pairs; every group is in the CSV), the corpus rate as a dashed line."""
    rows = [r for r in rows if r["rate"] is not None][:MAX_GROUPS]
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.32 * max(len(rows), 1)))
    labels = [f"{r['group']} (n={r['pairs']})" for r in rows][::-1]
    ys = list(range(len(rows)))
    ax.errorbar([r["rate"] for r in rows][::-1], ys, xerr=[e[::-1] for e in _errors(rows)], fmt="o",
                color=COLOR, ecolor=COLOR, capsize=3)
    ax.set_yticks(ys, labels)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    if overall is not None:
        ax.axvline(overall, color="#888", linestyle="--", linewidth=1, label="corpus rate")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("paraphrase rate (95% interval, conversations resampled)")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def rate_over_time(rows: List[Dict[str, object]], title: str) -> str:
    """Rate per period with its 95% interval as a band (periods in order)."""
    rows = sorted((r for r in rows if r["rate"] is not None), key=lambda r: r["group"])
    fig, ax = plt.subplots(figsize=(7, 3))
    xs = list(range(len(rows)))
    rates = [r["rate"] for r in rows]
    ax.plot(xs, rates, "o-", color=COLOR)
    lows = [r["low"] if r["low"] is not None else r["rate"] for r in rows]
    highs = [r["high"] if r["high"] is not None else r["rate"] for r in rows]
    ax.fill_between(xs, lows, highs, color=COLOR, alpha=0.2, label="95% interval")
    step = max(1, len(rows) // 12)
    ax.set_xticks(xs[::step], [r["group"] for r in rows][::step], rotation=45, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("paraphrase rate")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    return _svg(fig)


def score_distribution(bins: List[Dict[str, float]], threshold: Optional[float]) -> str:
    """Pairs per pair-score bin, the decision threshold drawn in."""
    fig, ax = plt.subplots(figsize=(7, 3))
    width = bins[0]["high"] - bins[0]["low"] if bins else 0.05
    ax.bar([b["low"] for b in bins], [b["pairs"] for b in bins], width=width, align="edge",
           color=COLOR, alpha=0.8, edgecolor="white")
    if threshold is not None:
        ax.axvline(threshold, color="#d1242f", linewidth=2, label=f"threshold {threshold:g}")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlim(0, 1)
    ax.set_xlabel("pair score")
    ax.set_ylabel("pairs")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # whole pairs on a small histogram
    ax.set_title("Pair scores", fontsize=10)
    return _svg(fig)
