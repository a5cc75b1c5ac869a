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


def majority(matrix) -> "tuple[numpy.ndarray, numpy.ndarray]":
    """(per item: 1 when more than half of its coders said 1, else 0 (a tie
    counts as 0, as ContextDeP's gold does); per item: whether it was a tie).
    Items nobody labelled are NaN."""
    matrix = numpy.asarray(matrix, dtype=float)
    coded = (~numpy.isnan(matrix)).sum(axis=0)
    yes = numpy.nansum(matrix, axis=0)
    out = numpy.where(coded > 0, (yes * 2 > coded).astype(float), numpy.nan)
    return out, (coded > 0) & (yes * 2 == coded)


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
