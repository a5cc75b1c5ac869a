"""benchmarks.run_cli_help: the two --help commands timed alternately, the
medians and their ratio, a JSON without machine paths."""
import json

import pytest

from benchmarks import run_cli_help


def test_measure_warms_up_then_alternates():
    calls = []
    seconds = {"spacy": iter([9.0, 1.0, 3.0, 2.0]), "spacy_paraphrase": iter([9.0, 2.0, 6.0, 4.0])}

    def timer(args):
        name = args[1]
        calls.append(name)
        return next(seconds[name])

    times = run_cli_help.measure(3, timer)
    assert calls == ["spacy", "spacy_paraphrase"] * 4  # one warm-up each, then alternating
    assert times == {"spacy": [1.0, 3.0, 2.0], "spacy_paraphrase": [2.0, 6.0, 4.0]}  # warm-up not kept
    summary = run_cli_help.summarize(times)
    assert summary["median_seconds"] == {"spacy": 2.0, "spacy_paraphrase": 4.0}
    assert summary["ratio"] == 2.0 and summary["meets_target"] is False
    assert run_cli_help.summarize({"spacy": [1.0], "spacy_paraphrase": [1.1]})["meets_target"] is True


def test_the_commands_are_the_two_help_texts():
    assert run_cli_help.COMMANDS == {"spacy": ["-m", "spacy", "--help"],
                                     "spacy_paraphrase": ["-m", "spacy_paraphrase", "--help"]}
    assert run_cli_help.time_command(["-c", "pass"]) > 0
    with pytest.raises(Exception):
        run_cli_help.time_command(["-c", "raise SystemExit(3)"])


def test_main_writes_the_ratio_and_no_machine_paths(tmp_path, monkeypatch):
    monkeypatch.setattr(run_cli_help, "measure", lambda repeats: {
        "spacy": [1.0] * repeats, "spacy_paraphrase": [1.5] * repeats})
    output = tmp_path / "cli_help.json"
    assert run_cli_help.main(["--repeats", "2", "--output", str(output)]) == 0
    text = output.read_text()
    result = json.loads(text)
    assert result["ratio"] == 1.5 and result["median_seconds"]["spacy"] == 1.0
    assert result["command"] == "python -m benchmarks.run_cli_help --repeats 2"
    assert result["commands"]["spacy_paraphrase"] == "python -m spacy_paraphrase --help"
    assert str(run_cli_help.REPO) not in text and str(tmp_path) not in text and "/home/" not in text
