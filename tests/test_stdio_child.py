"""The stdio test client (tests/stdio_child.py) and `gpu-advisor serve` under thread-switch stress.

A loaded CI run once waited 120 s after ``initialize`` for an answer the server had already written: the test read
the pipe with select() + readline(), and one readline() had pulled the last replies into the file object's buffer,
where select() never sees them (the failure message showed the first 500 characters of the replies: the initialize
answer alone). The server was not hung: spawns with a 1 µs thread-switch interval, CPU burners and no bytecode cache
all answered. These tests keep both sides honest without being slow."""

from __future__ import annotations

import select
import subprocess
import sys
import time
from pathlib import Path

from stdio_child import Child
from test_hostile_inputs import check_stdio_replies

BURST = "import sys; sys.stdout.write('{\"id\": 1}\\n{\"id\": 2}\\n{\"id\": 3}\\n'); sys.stdout.flush(); sys.stdin.read()"


def test_a_burst_of_replies_is_read_whole() -> None:
    """Three replies written at once are three replies, without waiting for more bytes."""
    child = Child([sys.executable, "-c", BURST])
    try:
        started = time.monotonic()
        assert child.replies_until(3, timeout=30), child.stacks()
        assert [r["id"] for r in child.replies] == [1, 2, 3]
        assert time.monotonic() - started < 30
        assert child.close() == 0
    finally:
        child.kill()


def test_select_then_readline_loses_a_burst() -> None:
    """Why the client reads with os.read: select() + readline() on the same burst stalls after the first line."""
    with subprocess.Popen([sys.executable, "-c", BURST], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as proc:
        assert proc.stdout and proc.stdin
        assert select.select([proc.stdout], [], [], 30)[0]
        time.sleep(0.2)  # all three lines are in the pipe
        assert proc.stdout.readline() == b'{"id": 1}\n'
        assert not select.select([proc.stdout], [], [], 0.3)[0]  # two lines are buffered, none is in the pipe
        proc.stdin.close()
        proc.wait(30)


# The server with a 1 µs thread-switch interval (the GIL changes hands as often as it can: the warm-up, the tool
# calls' worker threads and the event loop interleave at every bytecode), the warm-up started at the first message
# after the handshake (delay 0: it runs beside the first tool calls), and a client that reads only
# once the server has answered everything and gone idle (a test process descheduled under load: what the old reader
# waited 120 s on).
STRESSED = ("import sys; sys.setswitchinterval(1e-6); from gpu_advisor.cli import main; sys.exit(main(['serve']))")


def test_stdio_under_thread_switch_stress(tmp_path: Path) -> None:
    child = Child([sys.executable, "-c", STRESSED], cwd=tmp_path, env={"GPU_ADVISOR_WARM_UP_DELAY_S": "0"})
    try:
        check_stdio_replies(child, timeout=60, read_late=True)
    finally:
        child.kill()
