"""benchmarks/run_seed_study.sh: every run is started, and the study's exit
status says whether any failed (the table of the others is still written).
PYTHON points at a stand-in that records its commands instead of training."""
import os
import stat
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

FAKE_PYTHON = """#!/bin/bash
echo "$*" >> "$CALLS"
case "$*" in
  *table_seed_study*) exit 0 ;;
  *"--seeds $FAIL_SEED "*) exit 3 ;;
esac
exit 0
"""


def _study(tmp_path, fail_seed):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "calls.txt"
    env = dict(os.environ, PYTHON=str(fake), CALLS=str(calls), FAIL_SEED=fail_seed, GPU="-1",
               SEEDS="0 1", SYSTEMS="soft", WORK=str(tmp_path / "work"), OUTPUT=str(tmp_path / "study.json"))
    result = subprocess.run(["bash", "benchmarks/run_seed_study.sh"], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=60)
    return result, calls.read_text().splitlines()


def test_all_runs_succeed_exit_zero(tmp_path):
    result, calls = _study(tmp_path, fail_seed="none")
    assert result.returncode == 0, result.stderr
    assert sum("run_compare_modes" in c for c in calls) == 2 and "table_seed_study" in calls[-1]


def test_a_failed_run_exits_one_after_the_table(tmp_path):
    result, calls = _study(tmp_path, fail_seed="1")
    assert result.returncode == 1
    assert "soft_s1 rc=3" in result.stdout and "some runs failed" in result.stderr
    assert sum("run_compare_modes" in c for c in calls) == 2  # the other run still ran
    assert "table_seed_study" in calls[-1]  # and the table was written
