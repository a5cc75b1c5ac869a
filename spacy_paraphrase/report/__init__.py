"""``report``: annotate records -> a corpus report (docs/report.md).

records.py reads the records (the one reader), fields.py the fields to group
by, statistics.py the rates and their cluster-bootstrap intervals, phrases.py
the phrases picked up, figures.py the plots, page.py the HTML,
validation_section.py the section of a ``validate score`` file, build.py the
whole report."""
from importlib.util import find_spec
from typing import List

NEEDS = {"matplotlib": "matplotlib", "krippendorff": "krippendorff", "sklearn": "scikit-learn",
         "spacy_lookups_data": "spacy-lookups-data"}


def missing() -> List[str]:
    """The packages of the ``report`` extra that are not installed."""
    return [package for module, package in NEEDS.items() if find_spec(module) is None]
