"""A worker process never outlives the program that started it (the window killed or crashed)."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PARENT = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from optrr_engine.process_pool import ProcessPool

    def long_call(pid_file, progress=None, cancel=None):
        # like a solver inside one long call: no progress, never reads its cancel flag
        Path(pid_file).write_text(str(os.getpid()))
        time.sleep(600)

    if __name__ == "__main__":
        ProcessPool(max_workers=1).run(long_call, (sys.argv[1],))
    """
)


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (an orphan's zombie waits for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process states are read from /proc (Linux)")
def test_a_worker_ends_when_its_parent_is_killed(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT, encoding="utf-8")
    pid_file = tmp_path / "worker.pid"
    parent = subprocess.Popen([sys.executable, str(script), str(pid_file)], cwd=tmp_path)
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text().strip(), 120), "the task never started"
        worker = int(pid_file.read_text())
        assert worker != parent.pid and running(worker)
        os.kill(parent.pid, signal.SIGKILL)  # no clean-up code of the parent runs
        parent.wait(30)
        # The task sleeps 600 s without progress: only the worker's watch on its parent can end it.
        assert wait_for(lambda: not running(worker), 30), "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(30)
        if pid_file.exists() and pid_file.read_text().strip() and running(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)  # a failed run leaves no orphan behind
