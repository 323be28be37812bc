"""Client side of one fork server (``zygote.py``): start it, run jobs on it, restart it after a crash."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from .config import SandboxConfig
from .modules import module_locations
from .preamble import PREAMBLE
from .uids import NoFreeUid, UidLease, lease_uid
from .zygote import recv_msg, send_msg

ZYGOTE = Path(__file__).with_name("zygote.py")
STARTUP_TIMEOUT_S = 120.0
#: Slack over a job's time limit before the grader gives up on a fork server that does not answer.
REPLY_SLACK_S = 60.0

log = logging.getLogger(__name__)
_warned: set[str] = set()
_warn_lock = threading.Lock()


class SandboxError(RuntimeError):
    """The fork server died or stopped answering; the job's outcome is unknown."""


@dataclass(frozen=True)
class RunResult:
    """What happened to one program. Times in seconds; ``cpu`` excludes reaped descendants."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    wall: float
    cpu: float
    stdout: str
    output_truncated: bool
    stderr: str
    result: str
    leftover_processes: bool


def _warn_once(key: str, message: str) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    log.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def _server_env() -> dict[str, str]:
    """The whole environment of the fork server and its programs (nothing of the grader's)."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        # One thread per numeric library: the server forks, and threads do not survive a fork.
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }


class ForkServer:
    """One fork server process; not thread-safe (``SandboxPool`` hands it to one thread at a time)."""

    def __init__(self, config: SandboxConfig):
        self.config = config
        self.isolation: dict = {}
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._lease: UidLease | None = None
        self._stderr = None

    def run(self, job: dict) -> RunResult:
        """Run one job (see ``zygote.py`` for its fields); raises SandboxError if the server fails."""
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        assert self._sock is not None
        try:
            self._sock.settimeout(float(job["time_limit"]) + REPLY_SLACK_S)
            send_msg(self._sock, job)
            reply = recv_msg(self._sock)
        except (OSError, ValueError):
            reply = None
        except BaseException:
            # Interrupted (Ctrl-C) with a job in flight: its late reply would answer the next job.
            self._stop()
            raise
        if reply is None:
            detail = self._stop()
            raise SandboxError(f"sandbox fork server stopped answering{detail}")
        return RunResult(**reply)

    def _start(self) -> None:
        self._stop()
        if os.geteuid() == 0 and self._lease is None:
            try:
                self._lease = lease_uid(self.config.uid_base, self.config.uid_count)
            except NoFreeUid as exc:
                raise SandboxError(str(exc)) from exc
        ours, theirs = socket.socketpair()
        self._stderr = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(ZYGOTE), str(theirs.fileno())],
                pass_fds=[theirs.fileno()],
                env=_server_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                cwd="/",
                start_new_session=True,
            )
        finally:
            theirs.close()
        self._sock = ours
        setup = {
            "uid": self._lease.uid if self._lease else None,
            "memory_mb": self.config.memory_mb,
            "max_processes": self.config.max_processes,
            "output_limit_mb": self.config.output_limit_mb,
            "max_open_files": self.config.max_open_files,
            "tmpfs_mb": self.config.tmpfs_mb,
            "hidden_paths": list(self.config.hidden_paths),
            "module_locations": module_locations(tuple(self.config.modules)),
            "preload": list(self.config.preload),
            "env": _server_env(),
            "preamble": PREAMBLE,
        }
        try:
            ours.settimeout(STARTUP_TIMEOUT_S)
            send_msg(ours, setup)
            hello = recv_msg(ours)
        except (OSError, ValueError):
            hello = None
        if hello is None:
            detail = self._stop()
            raise SandboxError(f"sandbox fork server failed to start{detail}")
        self.isolation = hello
        self._check_isolation(hello)

    def _check_isolation(self, hello: dict) -> None:
        notes = "; ".join(hello.get("notes", []))
        if not hello.get("network_namespace"):
            _warn_once("net", f"sandbox: no network namespace, programs can use the network ({notes})")
        if not hello.get("private_tmp"):
            _warn_once("tmp", f"sandbox: no mount namespace, programs can write to the host's /tmp ({notes})")
        if hello.get("uid") is None and not hello.get("pid_namespace"):
            _warn_once(
                "uid",
                "sandbox: not running as root, programs run under the grader's own uid: they can signal "
                "its processes and RLIMIT_NPROC counts all of that user's processes",
            )
        for failure in hello.get("preload_failed", []):
            _warn_once(f"preload:{failure}", f"sandbox: could not preload {failure}")

    def _stop(self) -> str:
        """Kill the server process; return its stderr tail (for error messages), if any."""
        detail = ""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
        if self._stderr is not None:
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
            self._stderr.close()
            self._stderr = None
            detail = f": {tail}" if tail else ""
        return detail

    def close(self) -> None:
        """Stop the server (closing its socket makes it exit) and free its uid."""
        self._stop()
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    def abandon(self) -> None:
        """In a forked child: drop the inherited handles without touching the parent's server."""
        if self._sock is not None:
            self._sock.close()
        if self._lease is not None:
            self._lease.release()
        self._sock = self._proc = self._lease = self._stderr = None
