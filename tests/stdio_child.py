"""`gpu-advisor serve` (stdio) as a child process that a test talks to in JSON lines, with deadlines that hold.

- Replies are read from the pipe with ``os.read`` into our own buffer. ``select()`` on ``proc.stdout`` followed by
  ``proc.stdout.readline()`` waits forever once one read has pulled several replies into the file object's buffer:
  select sees only what is still in the pipe. That was the 120 s "no answer after initialize" of a loaded CI run
  (the server had answered everything; the test's reader held the rest of the lines; tests/test_stdio_child.py).
- stdin is written, and stderr drained, on threads: a child that stops reading, or writes more than a pipe holds to
  stderr, cannot block the test outside its deadline.
- On a timeout, ``stacks()`` asks the child for every thread's stack (PYTHONFAULTHANDLER=1 is set at spawn, and
  faulthandler dumps them on SIGABRT) and returns them with the child's stderr, for the failure message.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


def serve_command() -> list[str]:
    script = Path(sys.executable).parent / "gpu-advisor"
    return [str(script), "serve"] if script.exists() else [sys.executable, "-m", "gpu_advisor.cli", "serve"]


class Child:
    """A running server: ``send(lines)``, ``reply(timeout)`` / ``replies_until(pred, deadline)``, ``close()``."""

    def __init__(self, command: list[str] | None = None, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(command or serve_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd,
                                     env={**os.environ, **(env or {}), "PYTHONFAULTHANDLER": "1"})
        assert self.proc.stdout and self.proc.stderr and self.proc.stdin
        self.fd = self.proc.stdout.fileno()  # read with os.read only, never through proc.stdout's buffer
        self.pending = b""
        self.replies: list[dict[str, Any]] = []
        self._stderr: list[bytes] = []
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        self._writer: threading.Thread | None = None

    def _read_stderr(self) -> None:
        assert self.proc.stderr
        for chunk in iter(lambda: os.read(self.proc.stderr.fileno(), 65536), b""):  # type: ignore[union-attr]
            self._stderr.append(chunk)

    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def send(self, lines: list[bytes]) -> None:
        """Write the lines (each gets a newline) on a thread of its own, then leave stdin open."""
        data = b"".join(line + b"\n" for line in lines)

        def write() -> None:
            try:
                self.proc.stdin.write(data)  # type: ignore[union-attr]
                self.proc.stdin.flush()  # type: ignore[union-attr]
            except (BrokenPipeError, ValueError):
                pass  # the child has gone: reply() says so

        self._writer = threading.Thread(target=write, daemon=True)
        self._writer.start()

    def cpu_ticks(self) -> int | None:
        """The child's CPU time so far (clock ticks, Linux /proc), or None where /proc is not there."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return int(fields[11]) + int(fields[12])  # utime, stime

    def wait_idle(self, quiet: float = 0.3, timeout: float = 30) -> None:
        """Return once the child has used no CPU for ``quiet`` seconds (it waits for input: everything sent so far
        is answered), or after ``timeout`` seconds; without /proc, after ``timeout`` / 10 seconds."""
        deadline = time.monotonic() + timeout
        last = self.cpu_ticks()
        if last is None:
            time.sleep(timeout / 10)
            return
        while time.monotonic() < deadline:
            time.sleep(quiet)
            now = self.cpu_ticks()
            if now == last:
                return
            last = now

    def reply(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line, or None at ``deadline`` (time.monotonic()) or when the child closes its stdout."""
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        self.replies.append(json.loads(line))
        return self.replies[-1]

    def replies_until(self, reply_id: Any, timeout: float) -> bool:
        """Read replies until the one with ``reply_id``; False when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        while not self.replies or self.replies[-1].get("id") != reply_id:
            if self.reply(deadline) is None:
                return False
        return True

    def stacks(self) -> str:
        """Why it is late: the replies' ids so far, then every thread's stack (faulthandler, on SIGABRT) and the
        rest of stderr. Ends the child."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGABRT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:  # pragma: no cover - a child that ignores SIGABRT
            self.proc.kill()
            self.proc.wait(30)
        self._drain.join(10)
        ids = [r.get("id") for r in self.replies]
        return (f"replies so far (ids): {ids}; unread bytes: {len(self.pending)}; exit status {self.proc.returncode}\n"
                f"--- child stderr (thread stacks on SIGABRT) ---\n{self.stderr()[-12000:]}")

    def close(self, timeout: float = 60) -> int:
        """Close stdin (the client leaves) and wait for the exit status."""
        if self._writer is not None:
            self._writer.join(timeout)
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except BrokenPipeError:  # pragma: no cover
            pass
        code = self.proc.wait(timeout)
        self._drain.join(10)
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]
        return code

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
