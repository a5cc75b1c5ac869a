"""``report``: annotate records -> a corpus report (docs/report.md).

records.py reads the records (the one reader), fields.py the fields to group
by, statistics.py the rates and their cluster-bootstrap intervals, phrases.py
the phrases picked up, figures.py the plots, page.py the HTML, build.py the
whole report."""
