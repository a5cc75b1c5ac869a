from benchmarks.run_annotate import short_pools, turn_pools, write_interviews, write_markdown
from spacy_paraphrase.dialogs import read_turn_pairs


def test_interviews_hold_exactly_the_requested_pairs(tmp_path):
    guests, hosts = short_pools()
    for n in (1, 10, 25):
        path = tmp_path / f"c{n}.jsonl"
        assert write_interviews(path, n, guests, hosts, seed=0) == n
        pairs = list(read_turn_pairs(path, "mediasum"))
        assert len(pairs) == n
        assert {p.first.speaker for p in pairs} <= {"GUEST", "HOST"}
        assert all(p.first.speaker != p.second.speaker for p in pairs)


def test_turn_pools_fall_back_to_generated_turns(tmp_path):
    guests, hosts, source = turn_pools(tmp_path / "missing.tsv")
    assert source.startswith("generated") and len(guests) == len(hosts) == 400
    mean_first = sum(len(t.split()) for t in guests) / len(guests)
    assert 70 < mean_first < 110


def test_markdown_reports_ratio_and_growth_against_the_targets(tmp_path):
    results = {
        "command": "python -m benchmarks.run_annotate", "date": "d", "machine": "m", "cpus": 2,
        "load_start": 1.0, "load_end": 2.0, "model": "tiny", "pairs_source": "src", "memory_pairs_source": "short",
        "targets": {"throughput_ratio": 0.9, "rss_growth_mib": 50},
        "throughput": {"pairs": 10, "words": 100, "batch_size": 64, "torch_threads": 1, "repeats": 1,
                       "load_seconds": 1.0, "count_pass_seconds": 0.1,
                       "pairs_per_s": {"bare_cpu": [10.0], "annotate_cpu": [8.0], "bare_wall": [9.0],
                                       "annotate_wall": [9.5]},
                       "ratio_cpu_per_repeat": [0.8], "ratio_wall_per_repeat": [9.5 / 9.0],
                       "ratio_cpu": 0.8, "ratio_wall_best": 9.5 / 9.0},
        "memory": {"runs": [{"pairs": 10, "records": 10, "peak_rss_mib": 500.0, "wall_seconds": 1.0},
                            {"pairs": 100, "records": 100, "peak_rss_mib": 520.0, "wall_seconds": 2.0}],
                   "growth_mib": 20.0},
    }
    path = tmp_path / "a.md"
    write_markdown(results, path)
    text = path.read_text()
    assert "**0.800** (target >= 0.9: NOT met); best wall rates: 1.056" in text
    assert "**+20.0 MiB** (target <= 50 MB: met)" in text
    assert "/tmp" not in text


def test_chats_hold_exactly_the_requested_pairs(tmp_path):
    from benchmarks.run_annotate import write_chats

    guests, hosts = short_pools()
    path = tmp_path / "chat.jsonl"
    assert write_chats(path, 7, guests, hosts, seed=0) == 7
    pairs = list(read_turn_pairs(path, "chat"))
    assert len(pairs) == 7 and len({p.conversation_id for p in pairs}) == 7


def test_throughput_turns_the_order_of_fresh_processes_and_names_each_policy(monkeypatch):
    from benchmarks import run_annotate

    calls = []
    speed = {"bare": 10.0, "annotate-lean": 8.0, "annotate-fast": 10.5}

    def fake_worker(kind, model, corpus, batch_size, mode, threads, fmt):
        calls.append(mode)
        return {"mode": mode, "pairs": 5, "words": 50, "wall": speed[mode], "cpu": speed[mode],
                "load_seconds": 1.0, "load_cpu_seconds": 0.5, "count_pass_seconds": 0.0, "torch_threads": 1}

    monkeypatch.setattr(run_annotate, "run_worker", fake_worker)
    result = run_annotate.measure_throughput("m", "c", 64, 3, 1, "chat", ["lean", "fast"])
    assert calls[:3] == ["bare", "annotate-lean", "annotate-fast"]
    assert calls[3:6] == ["annotate-lean", "annotate-fast", "bare"]
    assert result["ratio_cpu"] == 0.8 and result["ratio_cpu_fast"] == 1.05
    assert result["pairs_per_s"]["annotate_fast_wall"] == [10.5] * 3
