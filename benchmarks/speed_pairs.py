"""The pairs that ``run_speed`` feeds every system: seeded, generated
interview-like pairs (when ContextDeP dev is missing, or ``--no-data``; and
for the scaling runs), and the batching and word counts of a pair list.

A pair is ``{"id", "first", "second", "targets_first", "targets_second"}``:
the two turns' words and their 0/1 word targets.
"""
import random
from typing import List, Optional

# ContextDeP dev: first turn ~82 words (mean), second ~35; generated pairs
# follow these means.
GEN_FIRST_MEAN, GEN_FIRST_SD = 90, 30
GEN_SECOND_MEAN, GEN_SECOND_SD = 35, 15
FIRST_SHARE = GEN_FIRST_MEAN / (GEN_FIRST_MEAN + GEN_SECOND_MEAN)

# A small interview-like vocabulary (function words dominate, some long and
# rare words so that wordpieces per word are realistic, ~1.2-1.3).
_WORDS = (
    "the a an and but or so because if that this these those it it's I I'm you you're we "
    "they he she his her their our my your me us them is are was were be been being have "
    "has had do does did don't didn't can can't could would should will won't not no yes "
    "well know think mean really just very about there here what which who when where why "
    "how all some any many much more most other another such only also even still again "
    "now then today yesterday tomorrow year years time times people country government "
    "president administration congress senator campaign election voters policy economy "
    "jobs unemployment taxes healthcare insurance military troops war peace security "
    "border immigration reform budget deficit spending billion million percent dollars "
    "interview question answer morning evening story news network reporter correspondent "
    "said says say told tell talk talking going go went come came get got make made take "
    "took see saw look looking want wanted need needed believe believed understand "
    "important difficult different possible clear certainly obviously absolutely "
    "unprecedented bipartisan investigation administration's Washington America American "
    "Americans Iraq Afghanistan Obama Bush Clinton Republicans Democrats Pentagon "
    "negotiations intelligence responsibility accountability circumstances "
    "1990s 2008 20th 9/11 -- Mr. Ms. Dr. U.S. OK"
).split()
_PUNCT_WORDS = ("well,", "know,", "think,", "now,", "right?", "that.", "today.", "there.", "yes,", "no.")


def batches(seq: list, size: int) -> List[list]:
    """seq in consecutive groups of size (the last one shorter)."""
    return [seq[i : i + size] for i in range(0, len(seq), size)]


def n_words(pairs: List[dict]) -> int:
    """Words of both turns over all pairs."""
    return sum(len(p["first"]) + len(p["second"]) for p in pairs)


def generate_pairs(
    n: int, seed: int, first_len: Optional[int] = None, second_len: Optional[int] = None
) -> List[dict]:
    """Seeded pairs of interview-like words. Lengths: given, or drawn around
    ContextDeP's (first ~90 words, second ~35). About 57% are paraphrases (as
    in ContextDeP dev), with one highlighted run per turn."""
    rng = random.Random(seed)
    vocab = list(_WORDS) + list(_PUNCT_WORDS)
    pairs = []
    for k in range(n):
        n1 = first_len or int(min(200, max(10, round(rng.gauss(GEN_FIRST_MEAN, GEN_FIRST_SD)))))
        n2 = second_len or int(min(120, max(3, round(rng.gauss(GEN_SECOND_MEAN, GEN_SECOND_SD)))))
        first = [rng.choice(vocab) for _ in range(n1)]
        second = [rng.choice(vocab) for _ in range(n2)]
        t1, t2 = [0.0] * n1, [0.0] * n2
        if rng.random() < 0.57:
            for t, m in ((t1, n1), (t2, n2)):
                run = rng.randint(1, max(1, min(10, m)))
                start = rng.randint(0, m - run)
                for i in range(start, start + run):
                    t[i] = 1.0
        pairs.append({"id": f"gen-{seed}-{k}", "first": first, "second": second,
                      "targets_first": t1, "targets_second": t2})
    return pairs


def scale_pairs(length: int, n: int, seed: int) -> List[dict]:
    """n generated pairs of exactly ``length`` words, split between the turns
    as in ContextDeP (first turn ~72%)."""
    first = max(1, round(length * FIRST_SHARE))
    return generate_pairs(n, seed, first_len=first, second_len=max(1, length - first))
