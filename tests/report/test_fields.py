"""The fields a report groups by, and the dates of --by-time."""
import datetime

import pytest

from spacy_paraphrase.report.fields import FieldError, parse_time_option, time_values, to_date


@pytest.mark.parametrize("value,expected", [
    (0, datetime.date(1970, 1, 1)),
    (1551398400, datetime.date(2019, 3, 1)),
    (1551398400.5, datetime.date(2019, 3, 1)),
    ("2019-03-01", datetime.date(2019, 3, 1)),
    ("2019-03-01T23:30:00", datetime.date(2019, 3, 1)),
    ("2019-03-01T10:00:00Z", datetime.date(2019, 3, 1)),
    ("2019-03", datetime.date(2019, 3, 1)),
    ("2019", datetime.date(2019, 1, 1)),
    ("March 2019", None), ("", None), (None, None), (True, None), (float("nan"), None), ("2019-13", None),
])
def test_dates(value, expected):
    assert to_date(value) == expected


def test_time_option():
    assert parse_time_option("conversation.date:month") == ("conversation.date", "month")
    for bad in ("date", "date:week", ":year"):
        with pytest.raises(FieldError, match="FIELD:month or FIELD:year"):
            parse_time_option(bad)


def test_periods_count_values_that_are_not_dates():
    fields = [{"d": "2019-03-05"}, {"d": "2019-11-01"}, {"d": "soon"}, {}, {"d": 1551398400}]
    assert time_values("d:month", fields) == ("d", ["2019-03", "2019-11", None, None, "2019-03"], 1)
    assert time_values("d:year", fields)[1] == ["2019", "2019", None, None, "2019"]
