"""Agreement among coders (and with the model): Cohen's kappa for two
(scikit-learn), Krippendorff's alpha for any number with missing labels
(``krippendorff``), the coders' majority."""
from typing import Optional

import numpy


def cohen_kappa(a, b) -> Optional[float]:
    """Cohen's kappa of two label lists over the items both labelled (NaN =
    not labelled); None when fewer than two such items or when it is not
    defined (both coders gave one and the same label throughout)."""
    from sklearn.metrics import cohen_kappa_score

    a, b = numpy.asarray(a, dtype=float), numpy.asarray(b, dtype=float)
    both = ~(numpy.isnan(a) | numpy.isnan(b))
    if both.sum() < 2 or len(set(a[both]) | set(b[both])) < 2:
        return None
    return float(cohen_kappa_score(a[both].astype(int), b[both].astype(int)))


def krippendorff_alpha(matrix) -> Optional[float]:
    """Krippendorff's alpha (nominal) of a coders x items matrix (NaN = not
    labelled); None when fewer than two coders, no item with two labels, or
    only one value in all the pairable labels (no variation to agree on)."""
    import krippendorff

    matrix = numpy.asarray(matrix, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] < 2:
        return None
    pairable = (~numpy.isnan(matrix)).sum(axis=0) >= 2
    values = matrix[:, pairable]
    if not pairable.any() or len(set(values[~numpy.isnan(values)])) < 2:
        return None
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))


TIES = ("half", "exclude", "paraphrase", "not-paraphrase")
TIE_VALUE = {"half": 0.5, "exclude": numpy.nan, "paraphrase": 1.0, "not-paraphrase": 0.0}


def majority(matrix, tie: str = "half") -> "tuple[numpy.ndarray, numpy.ndarray]":
    """(per item: 1 when more than half of its coders said 1, 0 when fewer
    than half, a tie as ``tie`` says: 0.5 (``half``), NaN (``exclude``), 1
    (``paraphrase``) or 0 (``not-paraphrase``, as ContextDeP's gold);
    per item: whether it was a tie). Items nobody labelled are NaN."""
    if tie not in TIE_VALUE:
        raise ValueError(f"--tie {tie!r}: choose one of {', '.join(TIES)}")
    matrix = numpy.asarray(matrix, dtype=float)
    coded = (~numpy.isnan(matrix)).sum(axis=0)
    yes = numpy.nansum(matrix, axis=0)
    ties = (coded > 0) & (yes * 2 == coded)
    out = numpy.where(coded > 0, (yes * 2 > coded).astype(float), numpy.nan)
    return numpy.where(ties, TIE_VALUE[tie], out), ties


def mean_vote(matrix) -> numpy.ndarray:
    """Per item: the share of its coders who said 1 (NaN: nobody labelled it)."""
    matrix = numpy.asarray(matrix, dtype=float)
    coded = (~numpy.isnan(matrix)).sum(axis=0)
    return numpy.where(coded > 0, numpy.nansum(matrix, axis=0) / numpy.maximum(coded, 1), numpy.nan)


def percent_agreement(matrix) -> Optional[float]:
    """Share of agreeing coder pairs over the items with two or more labels."""
    matrix = numpy.asarray(matrix, dtype=float)
    agree = total = 0.0
    for column in matrix.T:
        labels = column[~numpy.isnan(column)]
        m = len(labels)
        if m < 2:
            continue
        k = labels.sum()
        agree += k * (k - 1) + (m - k) * (m - k - 1)
        total += m * (m - 1)
    return float(agree / total) if total else None
