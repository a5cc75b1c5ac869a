"""``convert <format>``: one sub-command per format, each with only its own options."""
import inspect
import re

import pytest
import typer
from typer.testing import CliRunner

from spacy_paraphrase.cli import app
from spacy_paraphrase import converters

# each sub-command of `convert` and the converter function it runs
CONVERTERS = {fmt: getattr(converters, f"convert_{fmt}") for fmt in ("contextdep", "circa", "multipit", "arpa", "pairs",
                                                                       "coded")}

# A wide terminal: rich lays --help out (wrapping summaries, cutting option
# names) at the width it finds in COLUMNS; the help tests below also run with
# a narrow COLUMNS outside, which this env overrides.
runner = CliRunner(env={"COLUMNS": "200"})

SHARED = {"--skip-bad", "--lang", "--help"}
OWN = {
    "contextdep": {"--mode"},
    "coded": {"--mode"},
    "circa": {"--labels", "--mode", "--split", "--setting", "--seed", "--held-out"},
    "multipit": set(),
    "arpa": {"--keep-near"},
    "pairs": {
        "--text1", "--text2", "--label", "--no-label", "--id-column", "--delimiter",
        "--header", "--no-header", "--quoting", "--label-map",
    },
}
NO_SKIP = {"coded"}  # a bad coded file stops the conversion: nothing to skip
FLAGS = {"--keep-near", "--no-label", "--header", "--no-header"}  # options without a value


def _flags(text: str):
    return set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))


def _convert_group():
    return typer.main.get_command(app).commands["convert"]


@pytest.mark.parametrize("columns", [None, "40"])
def test_convert_help_lists_each_format_on_one_line(columns, monkeypatch):
    if columns is not None:
        monkeypatch.setenv("COLUMNS", columns)  # a narrow terminal the tests may run in
    result = runner.invoke(app, ["convert", "--help"])
    assert result.exit_code == 0, result.output
    assert set(_convert_group().commands) == set(CONVERTERS) == set(OWN)
    for fmt, command in _convert_group().commands.items():
        summary = command.callback.__doc__.strip()
        assert "\n" not in summary  # one line
        assert re.search(rf"^\W*{fmt}\s+{re.escape(summary[:30])}", result.output, re.M), fmt


@pytest.mark.parametrize("fmt", sorted(OWN))
def test_help_shows_only_the_format_s_own_options(fmt, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")  # a narrow terminal the tests may run in
    result = runner.invoke(app, ["convert", fmt, "--help"])
    assert result.exit_code == 0, result.output
    assert _flags(result.output) == OWN[fmt] | SHARED - ({"--skip-bad"} if fmt in NO_SKIP else set())


@pytest.mark.parametrize("fmt", sorted(OWN))
def test_option_of_another_format_is_a_usage_error(fmt, tmp_path):
    out = tmp_path / "out.spacy"
    others = set().union(*OWN.values()) - OWN[fmt]
    assert others
    for flag in sorted(others):
        args = ["convert", fmt, str(tmp_path / "in.tsv"), str(out), flag]
        if flag not in FLAGS:
            args.append("x")
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (flag, result.output)
        assert f"No such option: {flag}" in result.output
        assert not out.exists()


@pytest.mark.parametrize("fmt", sorted(OWN))
def test_option_defaults_are_the_converter_s(fmt):
    """An option left out converts as the library function's default does."""
    accepted = inspect.signature(CONVERTERS[fmt]).parameters
    command = _convert_group().commands[fmt]
    checked = 0
    for param in command.params:
        if param.name not in accepted:
            continue
        if fmt == "pairs" and param.name == "label":
            assert param.default is None  # not given: the converter's default (or --no-label)
            continue
        assert param.default == accepted[param.name].default, (fmt, param.name)
        checked += 1
    assert checked >= (1 if fmt in NO_SKIP else 2)


def test_no_format_or_unknown_format(tmp_path):
    result = runner.invoke(app, ["convert"])
    assert all(fmt in result.output for fmt in OWN)
    result = runner.invoke(app, ["convert", "mrpc", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 2 and "No such command 'mrpc'" in result.output


def test_conversion_that_would_destroy_its_input_or_write_nothing_is_refused(tmp_path):
    data = tmp_path / "p.csv"
    data.write_text("sentence1,sentence2,label\na,b,1\n")
    res = runner.invoke(app, ["convert", "pairs", str(data), str(data)])
    assert res.exit_code == 1 and data.read_text() == "sentence1,sentence2,label\na,b,1\n"
    header_only = tmp_path / "h.csv"
    header_only.write_text("sentence1,sentence2,label\n")
    out = tmp_path / "h.spacy"
    res = runner.invoke(app, ["convert", "pairs", str(header_only), str(out)])
    assert res.exit_code == 1 and "No pair converted" in res.output and not out.exists()
    bad_rows = tmp_path / "b.csv"
    bad_rows.write_text("sentence1,sentence2,label\na,b\n")  # a row short of a field
    res = runner.invoke(app, ["convert", "pairs", str(bad_rows), str(out), "--skip-bad"])
    assert res.exit_code == 1 and "1 skipped" in " ".join(res.output.split()) and not out.exists()
    res = runner.invoke(app, ["convert", "pairs", str(data), str(out)])
    assert res.exit_code == 0 and out.exists() and not list(tmp_path.glob(".*"))
