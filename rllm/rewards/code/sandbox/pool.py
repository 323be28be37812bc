"""Per-process pools of fork servers, safe to use from threads and after ``fork``."""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .config import SandboxConfig
from .server import ForkServer


class SandboxPool:
    """Up to ``config.worker_count`` fork servers, started lazily and lent to one thread at a time."""

    def __init__(self, config: SandboxConfig):
        self.config = config
        self._idle: list[ForkServer] = []
        self._all: list[ForkServer] = []
        self._cond = threading.Condition()

    @contextmanager
    def server(self) -> Iterator[ForkServer]:
        with self._cond:
            while not self._idle and len(self._all) >= self.config.worker_count:
                self._cond.wait()
            if self._idle:
                server = self._idle.pop()
            else:
                server = ForkServer(self.config)
                self._all.append(server)
        try:
            yield server
        finally:
            with self._cond:
                self._idle.append(server)
                self._cond.notify()

    def close(self) -> None:
        with self._cond:
            for server in self._all:
                server.close()
            self._all.clear()
            self._idle.clear()

    def _abandon(self) -> None:
        for server in self._all:
            server.abandon()
        self._all.clear()
        self._idle.clear()
        self._cond = threading.Condition()


_pools: dict[SandboxConfig, SandboxPool] = {}
_pools_lock = threading.Lock()


def get_pool(config: SandboxConfig | None = None) -> SandboxPool:
    """The calling process's pool for ``config`` (default configuration if None)."""
    config = config or SandboxConfig()
    with _pools_lock:
        pool = _pools.get(config)
        if pool is None:
            pool = _pools[config] = SandboxPool(config)
        return pool


def close_pools() -> None:
    """Stop every fork server of this process (also run at interpreter exit)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


def _after_fork_in_child() -> None:
    # The child must not talk to its parent's servers (replies would interleave): start afresh.
    global _pools_lock
    _pools_lock = threading.Lock()
    for pool in _pools.values():
        pool._abandon()
    _pools.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(close_pools)
