"""Leases of private uids for fork servers, exclusive across every process on the machine.

Each fork server runs its programs under its own uid: RLIMIT_NPROC then bounds exactly that
server's programs (the limit is per uid, and ignored for root), a program cannot signal the grader,
a fork server or another server's program, and "kill every process of this uid" is a complete
clean-up. Exclusivity comes from an ``flock`` on ``<LOCK_DIR>/<uid>.lock``, released by the kernel
when the holding process dies, so a crashed grader never leaks a uid.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass

LOCK_DIR = "/run/lock/rllm-sandbox-uids" if os.path.isdir("/run/lock") else "/tmp/rllm-sandbox-uids"


class NoFreeUid(RuntimeError):
    """Every uid of the configured range is leased."""


@dataclass
class UidLease:
    uid: int
    fd: int

    def release(self) -> None:
        """Close the lock descriptor: frees the uid, or, in a forked child holding a duplicate,
        just drops the copy (an flock lives until every duplicate is closed)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def lease_uid(base: int, count: int) -> UidLease:
    """Lock the first free uid in ``[base, base + count)``."""
    os.makedirs(LOCK_DIR, mode=0o755, exist_ok=True)
    for uid in range(base, base + count):
        fd = os.open(os.path.join(LOCK_DIR, f"{uid}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise NoFreeUid(f"all {count} sandbox uids from {base} are in use (see {LOCK_DIR})")
