"""Temporaries left by killed runs: the next run removes those of this machine whose process is gone, and leaves
alone those of a live process and those of another machine (a folder shared over a network drive, where a process
id says nothing about whether that run is still writing)."""

import os
import subprocess
import sys

import numpy as np

from optrr_engine.io.atomic import SHUFFLE_PREFIX, TEMP_SUFFIX, AtomicFile, host_tag, pid_tag, remove_stale_temporaries
from optrr_engine.release.shuffle import ExternalShuffle


def dead_pid() -> int:
    """The id of a process of this machine that has finished."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def make(folder, names) -> None:
    for name in names:
        if name.startswith(SHUFFLE_PREFIX):
            os.mkdir(folder / name)
            (folder / name / "bucket-0.arrow").write_bytes(b"x")
        else:
            (folder / name).write_bytes(b"partial")


def test_only_this_machines_dead_runs_are_removed(tmp_path):
    dead, alive = dead_pid(), os.getppid()
    other_host = "another-workstation.hospital.example"
    assert host_tag(other_host) != host_tag()
    mine_dead = [f".out.csv.{pid_tag(dead)}.ab12cd{TEMP_SUFFIX}", f"{SHUFFLE_PREFIX}{pid_tag(dead)}-x1y2"]
    kept = [
        f".out.csv.{pid_tag(alive)}.ef34gh{TEMP_SUFFIX}",  # a live run here
        f"{SHUFFLE_PREFIX}{pid_tag(alive)}-z9",
        f".out.csv.{pid_tag(dead, other_host)}.ij56kl{TEMP_SUFFIX}",  # another machine: its pid means nothing here
        f"{SHUFFLE_PREFIX}{pid_tag(dead, other_host)}-w8",
        f".out.csv.p{dead}.mn78op{TEMP_SUFFIX}",  # no machine named (older OptRR): cannot be told, kept
        "out.csv",
        ".hidden-by-the-user",
    ]
    make(tmp_path, mine_dead + kept)
    assert sorted(remove_stale_temporaries(tmp_path)) == sorted(mine_dead)
    assert sorted(os.listdir(tmp_path)) == sorted(kept)


def test_the_writers_temporaries_name_this_machine_and_process(tmp_path):
    tag = pid_tag()
    assert tag == f"{host_tag()}-p{os.getpid()}" and len(host_tag()) == 9
    with AtomicFile(tmp_path / "out.csv") as tmp:
        assert os.path.basename(tmp.path).startswith(f".out.csv.{tag}.") and tmp.path.endswith(TEMP_SUFFIX)
        spill = ExternalShuffle(str(tmp_path), 1, np.random.default_rng(0))
        try:
            assert os.path.basename(spill.dir).startswith(f"{SHUFFLE_PREFIX}{tag}-")
            assert remove_stale_temporaries(tmp_path) == []  # this process's own temporaries stay
        finally:
            spill.cleanup()
