import json

from benchmarks.table_pair_results import backbones, main, table


def _write(path, data):
    path.write_text(json.dumps(data), encoding="utf-8")


def _scores(acc, pos_f=None, speed=None):
    scores = {"pair_classifier_acc": acc, "pair_classifier_macro_f": acc - 0.1}
    if pos_f is not None:
        scores.update(pair_classifier_pos_p=pos_f, pair_classifier_pos_r=pos_f, pair_classifier_pos_f=pos_f)
    if speed is not None:
        scores["pairs_per_second"] = speed
    return scores


def _rows(text, dataset):
    return [line for line in text.splitlines() if line.startswith(f"| {dataset} |")]


def test_rows_per_dataset_and_backbone(tmp_path):
    metrics, results = tmp_path / "metrics", tmp_path / "results"
    metrics.mkdir()
    results.mkdir()
    _write(metrics / "multipit_minilm_dev.json", _scores(0.688, 0.700, 182.4))
    _write(metrics / "multipit_minilm_last_dev.json", _scores(0.688, 0.700))
    _write(metrics / "multipit_minilm_train_time.json", {"seconds": 312.0})
    _write(metrics / "multipit_mpnet_dev.json", _scores(0.75, 0.77, 40.0))
    _write(metrics / "multipit_mpnet_train_time.json", {"seconds": 1800.0})
    _write(metrics / "arpa_e5_dev.json", _scores(0.8, 0.81, 50.0))
    _write(metrics / "arpa_e5_last_dev.json", _scores(0.79, 0.8))
    # earlier names without a backbone key are not read
    _write(metrics / "circa_dev.json", _scores(0.5))
    _write(metrics / "circa_last_dev.json", _scores(0.5))
    _write(metrics / "circa_train_time.json", {"seconds": 60.0})
    # the ContextDeP metrics share the folder
    _write(metrics / "contextdep_minilm_cpu_dev.json", {"paraphrase_spans_pair_f": 0.5})
    _write(results / "bi_encoder_multipit.json", {"acc": 0.667, "pos_p": 0.58, "pos_r": 0.82, "pos_f": 0.679,
                                                  "macro_f": 0.666, "train_seconds": 276.0, "pairs_per_second": 157.0})
    _write(results / "bi_encoder_circa.json", {"acc": 0.759, "macro_f": 0.642, "train_seconds": 131.7,
                                               "pairs_per_second": 220.4})
    assert backbones(metrics, "multipit") == ["minilm", "mpnet"]
    assert backbones(metrics, "arpa") == ["e5"]
    assert backbones(metrics, "circa") == []

    text = table(metrics, results)
    assert text.splitlines()[0].startswith("| dataset | backbone | dev split | system |")
    multipit = _rows(text, "multipit")
    assert [row.split(" | ")[1] for row in multipit] == ["minilm", "minilm", "minilm", "mpnet"]
    assert multipit[0] == ("| multipit | minilm | validation (555 pairs) | pair-aware (`pair_classifier`), model-best | "
                           "68.8 | 70.0 | 70.0 | 70.0 | 58.8 | 5.2 | 182 | F1 83.2 (expert test, DeBERTa-v3-large) |")
    assert "last step" in multipit[1] and multipit[1].endswith("| 5.2 | — |  |")
    assert "bi-encoder" in multipit[2] and "| 66.7 | 58.0 | 82.0 | 67.9 | 66.6 | 4.6 | 157 |" in multipit[2]
    assert "| 75.0 | 77.0 | 77.0 | 77.0 | 65.0 | 30.0 | 40 |" in multipit[3]
    # Circa: only the stored MiniLM bi-encoder (its pair-aware files have the old names)
    circa = _rows(text, "circa")
    assert len(circa) == 1 and "| circa | minilm |" in circa[0] and "bi-encoder" in circa[0]
    arpa = _rows(text, "arpa")
    assert len(arpa) == 2 and all("| arpa | e5 | 500 held-out train pairs" in row for row in arpa)
    assert "| 80.0 | 81.0 | 81.0 | 81.0 | 70.0 | — | 50 | F1 83.7" in arpa[0]


def test_main_writes_the_table(tmp_path, capsys):
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    _write(metrics / "circa_mpnet_dev.json", _scores(0.8, speed=30.0))
    out = tmp_path / "pair_results.md"
    main(["--metrics", str(metrics), "--benchmarks", str(tmp_path / "none"), "--output", str(out)])
    text = out.read_text(encoding="utf-8")
    assert text == capsys.readouterr().out
    assert _rows(text, "circa")[0].startswith("| circa | mpnet | matched dev, 1,000-pair subsample |")
    assert not _rows(text, "multipit") and not _rows(text, "arpa")
