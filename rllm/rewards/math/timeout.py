"""Process-safe time bounds for symbolic checks.

sympy can run for minutes, and Python cannot interrupt a thread; ``signal.alarm`` only works on the
main thread (it silently does nothing in a thread pool or a Ray actor). So symbolic checks run in
persistent worker processes (:mod:`.worker`) started with ``subprocess`` — not ``multiprocessing``,
which needs ``__main__`` guards under ``spawn`` and cannot start children from daemonic pool
workers. A check that misses its deadline gets its worker killed and replaced; the caller gets
:class:`CheckTimeout` at the deadline, whatever the worker was doing.

Workers start lazily, the import of sympy overlapping with the caller's own work, and are shared
by the threads of one process; a forked child starts its own pool.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

STARTUP_TIMEOUT = 60.0
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])


class CheckTimeout(TimeoutError):
    """A symbolic check did not finish before its deadline; its worker was killed."""


class WorkerFailed(RuntimeError):
    """The worker process died or could not be started."""


class _Worker:
    """One ``python -m rllm.rewards.math.worker`` process and its line protocol."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rllm.rewards.math.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            # Own session: a Ctrl-C meant for the caller must not kill the worker mid-reply.
            start_new_session=True,
        )
        self.buffer = b""
        self.ready = False

    def _read_line(self, deadline: float) -> dict:
        stdout = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CheckTimeout("symbolic check timed out")
            # poll, not select: select fails on descriptors above 1024, common in Ray or vLLM
            # processes.
            poller = select.poll()
            poller.register(stdout, select.POLLIN)
            if poller.poll(remaining * 1000):
                chunk = os.read(stdout, 65536)
                if not chunk:
                    raise WorkerFailed("symbolic worker exited")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def wait_ready(self) -> None:
        if not self.ready:
            try:
                self._read_line(time.monotonic() + STARTUP_TIMEOUT)
            except CheckTimeout as error:
                raise WorkerFailed("the symbolic worker did not start") from error
            self.ready = True

    def call(self, op: str, args: list, timeout: float) -> Any:
        self.wait_ready()
        try:
            self.process.stdin.write((json.dumps({"op": op, "args": args}) + "\n").encode())
            self.process.stdin.flush()
        except OSError as error:
            raise WorkerFailed("symbolic worker exited") from error
        return self._read_line(time.monotonic() + timeout)["result"]

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        self.forget()

    def forget(self) -> None:
        """Close this process's ends of the pipes without touching the worker (after a fork)."""
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass


class WorkerPool:
    """Up to ``size`` workers shared by the threads of one process."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"worker pool size must be at least 1, got {size}")
        self.size = size
        self._idle: list[_Worker] = []
        self._count = 0
        self._available = threading.Condition()

    def start(self, wait: bool = False) -> None:
        """Start one worker now so its sympy import overlaps with other work.

        With ``wait``, return only once a worker is ready (raises WorkerFailed if it cannot start).
        """
        with self._available:
            if self._count == 0:
                self._idle.append(_Worker())
                self._count += 1
            if not wait or not self._idle:
                return
            worker = self._idle.pop()
        try:
            worker.wait_ready()
        except WorkerFailed:
            worker.kill()
            self._release(None)
            raise
        self._release(worker)

    def _acquire(self) -> _Worker:
        with self._available:
            while not self._idle and self._count >= self.size:
                self._available.wait()
            if self._idle:
                return self._idle.pop()
            self._count += 1
        try:
            return _Worker()
        except OSError as error:
            with self._available:
                self._count -= 1
                self._available.notify()
            raise WorkerFailed(f"cannot start the symbolic worker: {error}") from error

    def _replace(self) -> None:
        """Start a successor for a killed worker now, so the next check finds it (nearly) ready."""
        try:
            successor = _Worker()
        except OSError:
            self._release(None)
            return
        self._release(successor)

    def _release(self, worker: _Worker | None) -> None:
        with self._available:
            if worker is None:
                self._count -= 1
            else:
                self._idle.append(worker)
            self._available.notify()

    def call(self, op: str, args: list, timeout: float) -> Any:
        """Run ``symbolic.OPERATIONS[op](*args)`` in a worker; CheckTimeout after ``timeout`` s."""
        worker = self._acquire()
        try:
            result = worker.call(op, args, timeout)
        except (CheckTimeout, WorkerFailed, ValueError):
            worker.kill()
            self._replace()
            raise
        self._release(worker)
        return result

    def close(self) -> None:
        """Stop the idle workers (busy ones stop when their caller finishes)."""
        with self._available:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        for worker in idle:
            worker.kill()


_pool = WorkerPool(max(1, min(4, os.cpu_count() or 1)))


def default_pool() -> WorkerPool:
    """The process-wide pool used by the grader."""
    return _pool


def _after_fork_in_child() -> None:
    # The parent's workers belong to the parent: close our copies of their pipes and start a new
    # pool. No lock is taken: another thread may have held it at the fork and will never release.
    global _pool
    inherited, _pool = _pool, WorkerPool(_pool.size)
    for worker in inherited._idle:
        worker.forget()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(lambda: _pool.close())
