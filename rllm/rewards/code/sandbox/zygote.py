"""Fork server that runs untrusted programs; a standalone script (standard library only).

The grader starts it as ``python -I -S zygote.py FD`` where FD is one end of a Unix socket pair;
``-I -S`` keep the user environment, ``site`` and every ``.pth`` hook out of it. It never imports the
``rllm`` package, so nothing of the grader's state is in the memory its children inherit.

Protocol (both directions: 4-byte big-endian length, then UTF-8 JSON):
  1. grader -> server: the setup (uid, limits, importable modules, preamble); server -> grader:
     ``hello`` describing the isolation that was actually obtained;
  2. then repeatedly one job -> one result, until the socket closes (the server then exits).

A job: ``mode`` (below), ``code`` (the program), ``time_limit`` (wall seconds; the CPU limit is
one second more), ``nonce`` (proves the report below came from the driver), ``preamble`` (bool),
``stdin`` (text), and per mode:
  script  run ``code`` as ``__main__`` with ``stdin`` on fd 0;
  call    run ``code`` as module ``solution``, then ``func_name(*json.loads(args))`` (a method of
          a fresh ``Solution()`` when the program defines that class); the value, as JSON, is
          reported;
  check   run ``code`` as module ``solution``, then ``test_code`` in the same namespace;
  pytest  write ``code`` to ``solution.py`` and ``test_code`` to ``test_solution.py``, run pytest.
The driver reports ``{"nonce", "status", ...}`` on fd 3 (status ``ok``, ``wrong``,
``compile_error``, ``runtime_error``, ``early_exit``, ``missing_function``, ``unserializable``,
``test_error``). A program that ends the interpreter itself (``os._exit``) leaves no report, so it
cannot pass a check by exiting with status 0; to forge one it would have to dig the nonce out of
the interpreter's memory. A result: exit code or signal, ``timed_out``, wall and CPU seconds,
stdout (up to the output limit), the stderr tail, the report, and whether processes were left.

Isolation, set up once here and inherited by every child:
  - a PID namespace whose init is this server, with its own ``/proc``: programs cannot see or
    signal anything outside, cannot kill their init, and one ``kill(-1)`` ends them all;
  - as root: a private uid per server, leased by the grader (RLIMIT_NPROC is not enforced for
    root, and it counts per uid); without root: a user namespace, which each job enters anew to
    drop the capabilities this server holds over its namespaces (and to get its own NPROC count);
  - a network namespace with only a down loopback (no network at all);
  - a mount namespace with fresh size-limited tmpfs over the world-writable directories, so files a
    program writes never reach the host (wiped after every job), and the configured hidden
    directories (home directories by default) covered by empty read-only tmpfs (``_cover``);
  - this process is a child subreaper, so every descendant of a job, even one that escaped its
    process group with ``setsid``, is reparented here and reaped.
Whatever the kernel refuses is reported in ``hello`` (the grader warns once) instead of failing.
Per job, the child forked from this warm interpreter: own session and process group, rlimits,
the private uid, no_new_privs, parent-death signal, scrubbed environment, stdio on anonymous
memory files, a fresh working directory. The wall-clock limit is enforced here with a pidfd; at
the end every process of the job is killed and reaped.
"""

import ast
import atexit
import builtins
import ctypes
import gc
import importlib.abc
import importlib.machinery
import json
import os
import resource
import select
import shutil
import signal
import site
import socket
import struct
import sys
import threading
import time
import traceback
import types

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MNT_DETACH = 2
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38

PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
JOB_DIR_ROOT = "/tmp"
STDERR_TAIL = 4000
FDS = ("stdin", "stdout", "stderr", "result")

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def send_msg(sock, obj) -> None:
    data = json.dumps(obj).encode()
    sock.sendall(struct.pack(">I", len(data)) + data)


def _recv_exact(sock, n):
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv_msg(sock):
    head = _recv_exact(sock, 4)
    if head is None:
        return None
    body = _recv_exact(sock, struct.unpack(">I", head)[0])
    return None if body is None else json.loads(body)


class AllowListFinder(importlib.abc.MetaPathFinder):
    """Makes exactly the configured top-level third-party modules importable.

    ``sys.path`` holds only the standard library (``-S``); submodules of an allowed package are
    found through the package's own ``__path__``, so they need no entry here.
    """

    def __init__(self, locations):
        self.locations = locations

    def find_spec(self, fullname, path=None, target=None):
        if path is not None or "." in fullname or fullname not in self.locations:
            return None
        return importlib.machinery.PathFinder.find_spec(fullname, [self.locations[fullname]])


def _enter_user_namespace():
    """A new user namespace mapping only our own ids: full capabilities inside it (to create the
    other namespaces), none over the namespaces of the parent one."""
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(CLONE_NEWUSER))
    for path, text in (
        ("/proc/self/setgroups", "deny"),
        ("/proc/self/uid_map", f"{uid} {uid} 1"),
        ("/proc/self/gid_map", f"{gid} {gid} 1"),
    ):
        with open(path, "w") as fh:
            fh.write(text)


def _become_namespace_init(sock):
    """Continue as PID 1 of a new PID namespace (inside a new user namespace, without root).

    Programs then cannot see or signal anything outside (without root, the grader runs under the
    same uid), cannot kill this server (a namespace init ignores SIGKILL from inside), and one
    ``kill(-1)`` from here ends every job process. The original process stays outside as the
    grader's handle: it waits for the new init and exits with it; if it is killed, the init gets
    SIGKILL and the kernel ends the whole namespace. Returns the facts for ``hello``.
    """
    user = os.geteuid() != 0
    try:
        if user:
            _enter_user_namespace()
        _check(_libc.unshare(CLONE_NEWPID))
    except OSError as exc:
        note = f"{'user' if user else 'PID'} namespace unavailable: {exc}"
        return {"user_namespace": False, "pid_namespace": False, "notes": [note]}
    pid = os.fork()
    if pid:
        sock.close()  # the grader must see EOF as soon as the server is gone
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0))
    return {"user_namespace": user, "pid_namespace": True, "notes": []}


def _isolate(setup):
    """Enter network and mount namespaces when the kernel allows; report what was obtained."""
    got = {"network_namespace": False, "private_tmp": False, "uid": None, "notes": []}
    try:
        _check(_libc.unshare(CLONE_NEWNET))
        got["network_namespace"] = True
    except OSError as exc:
        got["notes"].append(f"network namespace unavailable: {exc}")
    try:
        _check(_libc.unshare(CLONE_NEWNS))
        _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None))
        opts = f"size={setup['tmpfs_mb']}m,nr_inodes=65536,mode=1777".encode()
        for path in PRIVATE_DIRS:
            if os.path.isdir(path):
                _check(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts))
        got["private_tmp"] = True
        roots = [sys.base_prefix, sys.prefix, os.path.dirname(__file__), *setup["module_locations"].values()]
        _cover(setup["hidden_paths"], roots)
    except OSError as exc:
        got["notes"].append(f"mount namespace unavailable: {exc}")
    if got["private_tmp"] and os.getpid() == 1:
        try:  # the PID namespace's own /proc: the host's processes are not even listed
            _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None))
        except OSError as exc:
            got["notes"].append(f"could not mount a private /proc: {exc}")
    if os.geteuid() == 0 and setup.get("uid") is not None:
        got["uid"] = int(setup["uid"])
    return got


def _bind(source, target):
    _check(_libc.mount(source.encode(), target.encode(), None, MS_BIND | MS_REC, None))


def _cover(hidden, roots):
    """Hide directories from programs, keeping ``roots`` (the interpreter, allowed modules) visible.

    Hidden are the configured ``hidden`` paths (by default the home directories, where credentials
    live) and any ancestor of a root that others cannot enter (a Python under ``/root``, mode 0700,
    would otherwise leave programs unable to import the standard library once they drop to their
    uid). In this private mount namespace each such directory is covered with an empty read-only
    tmpfs and the roots inside it are bound back at their own paths, so module paths stay valid.
    """
    real = sorted({os.path.realpath(root) for root in roots})
    real = [r for r in real if not any(r != o and r.startswith(o + "/") for o in real)]
    covers = {os.path.realpath(path) for path in hidden if os.path.isdir(path)}
    for root in real:
        parts = root.split("/")
        for depth in range(2, len(parts)):
            ancestor = "/".join(parts[:depth])
            if not os.stat(ancestor).st_mode & 0o001:
                covers.add(ancestor)
                break
    covers = sorted(c for c in covers if not any(c != o and c.startswith(o + "/") for o in covers))
    for cover in covers:
        inner = [r for r in real if r.startswith(cover + "/")]
        if any(cover == r or cover.startswith(r + "/") for r in real):
            continue  # the cover is (inside) a root: hiding it would hide part of the root
        staged = []
        for k, root in enumerate(inner):
            stage = os.path.join(JOB_DIR_ROOT, f".stage-{k}")
            os.makedirs(stage)
            _bind(root, stage)
            staged.append((stage, root))
        _check(_libc.mount(b"tmpfs", cover.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=755"))
        for stage, root in staged:
            os.makedirs(root, mode=0o755, exist_ok=True)
            _bind(stage, root)
            _check(_libc.umount2(stage.encode(), MNT_DETACH))
            os.rmdir(stage)
        _check(_libc.mount(None, cover.encode(), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None))


class Server:
    def __init__(self, sock, setup, namespaces):
        self.sock = sock
        self.setup = setup
        self.pid = os.getpid()
        _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
        self.hello = _isolate(setup)
        self.hello["notes"] = namespaces["notes"] + self.hello["notes"]
        self.hello.update(
            user_namespace=namespaces["user_namespace"], pid_namespace=namespaces["pid_namespace"]
        )
        self.uid = self.hello["uid"]
        self.userns = namespaces["user_namespace"]
        # Everything of a job can be killed at once: as its private uid, or as its namespace's init.
        self.can_sweep = self.uid is not None or (namespaces["pid_namespace"] and self.pid == 1)
        self.job_root = JOB_DIR_ROOT if self.hello["private_tmp"] else None
        self.env = dict(setup["env"])
        # ``-S`` skipped ``site``, which is what defines the ``exit``/``quit``/``help`` builtins.
        site.setquit()
        site.sethelper()
        site.setcopyright()
        sys.meta_path.append(AllowListFinder(setup["module_locations"]))
        sys.dont_write_bytecode = True
        failed = []
        for name in setup["preload"]:
            try:
                __import__(name)
            except Exception as exc:  # a missing optional module must not stop the server
                failed.append(f"{name}: {exc!r}")
        self.hello["preload_failed"] = failed
        self.preamble = compile(setup["preamble"], "<preamble>", "exec")
        exec(self.preamble, {"__name__": "warmup"})
        self._sweep()
        self._reap_all(deadline=time.monotonic() + 5)
        self.hello["pid"] = self.pid
        # Objects alive now are shared copy-on-write with every child; keep the collector off them.
        gc.collect()
        gc.freeze()

    # -- per job -----------------------------------------------------------------------------

    def run(self, job):
        workdir = self._make_workdir()
        fds = {name: os.memfd_create(name, os.MFD_CLOEXEC) for name in FDS}
        try:
            data = job.get("stdin", "").encode("utf-8", "replace")
            view = memoryview(data)
            while view:
                view = view[os.write(fds["stdin"], view) :]
            os.lseek(fds["stdin"], 0, os.SEEK_SET)
            limit = float(job["time_limit"])
            start = time.monotonic()
            pid = os.fork()
            if pid == 0:
                code = 71  # the sandbox itself failed: shown in the job's stderr
                try:
                    code = self._child(job, fds, workdir)
                except BaseException:
                    traceback.print_exc()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
            timed_out = not _wait_exit(pid, limit)
            if timed_out:
                self._kill_job(pid)
            _, status, usage = os.wait4(pid, 0)
            wall = time.monotonic() - start
            leftovers = self._finish_descendants(pid)
            return self._collect(fds, status, usage, wall, timed_out, leftovers)
        finally:
            for fd in fds.values():
                os.close(fd)
            self._clean(workdir)

    def _make_workdir(self):
        root = self.job_root
        path = os.path.join(root, "job") if root else _mkdtemp()
        os.makedirs(path, mode=0o700, exist_ok=True)
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)
        os.chmod(path, 0o700)
        return path

    def _clean(self, workdir):
        if self.job_root is None:
            shutil.rmtree(workdir, ignore_errors=True)
            return
        for base in PRIVATE_DIRS:
            if not os.path.isdir(base):
                continue
            for name in os.listdir(base):
                target = os.path.join(base, name)
                if os.path.isdir(target) and not os.path.islink(target):
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    try:
                        os.unlink(target)
                    except OSError:
                        pass

    def _kill_job(self, pid):
        if self.can_sweep:
            self._sweep()
        else:
            _kill_tree(pid)

    def _finish_descendants(self, pid):
        """Kill and reap whatever the job left running; True if anything was left."""
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if self.can_sweep:
            self._sweep()
        else:
            _kill_tree(pid)
            for child in _children(self.pid):
                _kill_tree(child)
        self._reap_all(deadline=time.monotonic() + 10)
        return True

    def _reap_all(self, deadline):
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                if self.can_sweep:
                    self._sweep()
                else:
                    for child in _children(self.pid):
                        _kill_tree(child)
                time.sleep(0.01)

    def _sweep(self):
        """SIGKILL every job process: ``kill(-1)`` as the PID namespace's init, else as the job uid.

        One ``kill(-1)`` reaches a whole fork bomb: the kernel signals under the task-list lock that
        ``fork`` needs, and a forking process with a pending SIGKILL cannot complete the fork. The
        pass is repeated a few times anyway; it keeps "succeeding" while killed processes are
        zombies, and ``_reap_all`` sweeps again while any child is still running.
        """
        if self.pid == 1:
            try:
                os.kill(-1, signal.SIGKILL)  # as the namespace's init: every other process in it
            except ProcessLookupError:
                pass
            return
        if self.uid is None:
            return
        killer = os.fork()
        if killer == 0:
            try:
                os.setresuid(self.uid, self.uid, self.uid)
                for _ in range(3):
                    os.kill(-1, signal.SIGKILL)  # ProcessLookupError: nothing left
            finally:
                os._exit(0)
        os.waitpid(killer, 0)

    def _collect(self, fds, status, usage, wall, timed_out, leftovers):
        limit = int(self.setup["output_limit_mb"]) << 20
        stdout = _read_memfd(fds["stdout"], limit)
        stderr = _read_memfd(fds["stderr"], limit)
        result = _read_memfd(fds["result"], limit)
        return {
            "exit_code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "timed_out": timed_out,
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,
            "stdout": stdout.decode("utf-8", "replace"),
            "output_truncated": len(stdout) >= limit,
            "stderr": stderr[-STDERR_TAIL:].decode("utf-8", "replace"),
            "result": result.decode("utf-8", "replace"),
            "leftover_processes": leftovers,
        }

    # -- inside the child -------------------------------------------------------------------

    def _child(self, job, fds, workdir):
        os.setsid()
        self.sock.detach()  # its descriptor is closed below with all the others
        for target, name in enumerate(FDS):
            os.dup2(fds[name], target, inheritable=True)
        os.closerange(len(FDS), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        os.chdir(workdir)
        self._limit(job)
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)
        elif self.userns:
            _enter_user_namespace()  # drops the capabilities this server holds over its namespaces
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0))
        if os.getppid() != self.pid:
            return 72
        os.environ.clear()
        os.environ.update(self.env, HOME=workdir, TMPDIR=workdir, PWD=workdir)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        nonce = job.pop("nonce")
        preamble = self.preamble if job.get("preamble") else None
        self.setup = self.hello = None
        _fresh_stdio()
        atexit._clear()  # the server's own exit handlers are not the program's
        sys.argv = ["solution.py"]
        sys.path.insert(0, workdir)
        return _drive(job, nonce, preamble, workdir)

    def _limit(self, job):
        cpu = int(float(job["time_limit"])) + 1
        limits = {
            resource.RLIMIT_CPU: (cpu, cpu + 1),
            resource.RLIMIT_AS: (int(self.setup["memory_mb"]) << 20,) * 2,
            resource.RLIMIT_NPROC: (int(self.setup["max_processes"]),) * 2,
            resource.RLIMIT_FSIZE: (int(self.setup["output_limit_mb"]) << 20,) * 2,
            resource.RLIMIT_NOFILE: (int(self.setup["max_open_files"]),) * 2,
            resource.RLIMIT_CORE: (0, 0),
        }
        for which, value in limits.items():
            resource.setrlimit(which, value)


def _mkdtemp():
    import tempfile

    return tempfile.mkdtemp(prefix="rllm-sandbox-")


def _wait_exit(pid, limit):
    """Wait up to ``limit`` seconds for ``pid`` to exit; True if it did."""
    pidfd = os.pidfd_open(pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        return bool(poller.poll(max(0, int(limit * 1000))))
    finally:
        os.close(pidfd)


def _children(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found.extend(int(p) for p in fh.read().split())
    except OSError:
        pass
    return found


def _kill_tree(pid):
    """Best-effort kill of a process, its group and its descendants (used without a private uid)."""
    for child in _children(pid):
        _kill_tree(child)
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _read_memfd(fd, limit):
    os.lseek(fd, 0, os.SEEK_SET)
    chunks, size = [], 0
    while size < limit:
        chunk = os.read(fd, min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _fresh_stdio():
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)


# -- drivers: what the child runs -------------------------------------------------------------


def _print_traceback(exc):
    """Print ``exc`` like Python would, without this driver's own frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb)


def _report(nonce, status, **fields):
    data = json.dumps({"nonce": nonce, "status": status, **fields}).encode()
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(3, view) :]
    except OSError:
        pass


def _module(name):
    module = types.ModuleType(name)
    module.__dict__["__builtins__"] = builtins
    sys.modules[name] = module
    return module.__dict__


def _exit_code(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _error_fields(exc):
    return {"exception": type(exc).__name__, "message": str(exc)[:500]}


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            return 120
    return 0


def _drive(job, nonce, preamble, workdir):
    mode = job["mode"]
    if mode == "pytest":
        return _drive_pytest(job, nonce, workdir)
    namespace = _module("__main__" if mode == "script" else "solution")
    if preamble is not None:
        exec(preamble, namespace)
    provided = dict(namespace)
    # On disk too, only so that tracebacks can quote the program's lines.
    with open(os.path.join(workdir, "solution.py"), "w", encoding="utf-8", errors="replace") as fh:
        fh.write(job["code"])
    try:
        code = compile(job["code"], "solution.py", "exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError) as exc:
        _print_traceback(exc)
        _report(nonce, "compile_error", **_error_fields(exc))
        return 1
    status = 0
    try:
        exec(code, namespace)
        if mode == "call":
            _call(job, nonce, namespace, provided)
        elif mode == "check":
            _check_program(job, nonce, namespace)
        else:
            _report(nonce, "ok")
    except SystemExit as exc:
        if mode != "script":
            _report(nonce, "early_exit")
        status = _exit_code(exc)
    except BaseException as exc:
        _print_traceback(exc)
        _report(nonce, "runtime_error", **_error_fields(exc))
        status = 1
    _interpreter_exit()
    flush_status = _flush()
    return status or flush_status


def _interpreter_exit():
    """What Python does before exiting: wait for non-daemon threads (``threading.Thread(target=
    main).start()`` is a common way to get a deep stack), then run ``atexit`` callbacks."""
    try:
        threading._shutdown()
    except BaseException as exc:
        _print_traceback(exc)
    atexit._run_exitfuncs()


def _call(job, nonce, namespace, provided):
    """Call the program's ``func_name`` (a ``Solution`` method if the class exists); a name the
    program did not define itself (``add`` from the preamble's ``operator``) does not count."""
    name = job["func_name"]
    if "Solution" in namespace and isinstance(namespace["Solution"], type):
        target = getattr(namespace["Solution"](), name, None)
    elif name in provided and namespace.get(name) is provided[name]:
        target = None
    else:
        target = namespace.get(name)
    if not callable(target):
        _report(nonce, "missing_function", message=f"no callable {name!r} in the program")
        return
    value = target(*json.loads(job["args"]))
    if isinstance(value, tuple):
        value = list(value)
    try:
        payload = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        _report(nonce, "unserializable", message=repr(value)[:500])
        return
    _report(nonce, "ok", value=payload)


class EqualityOverride(BaseException):
    """A checked function returned an object whose class, defined by the program, overrides
    ``==``: the "always equal" reward hack. A BaseException, so test code cannot swallow it."""


def _reject_equality_overrides(value, depth=0):
    for klass in type(value).__mro__:
        for name in ("__eq__", "__ne__"):
            method = vars(klass).get(name)
            code = getattr(method, "__code__", None)
            if method is not None and (
                klass.__module__ == "solution" or getattr(code, "co_filename", "") == "solution.py"
            ):
                raise EqualityOverride(
                    f"returned a {type(value).__name__}, whose {name} is defined by the program"
                )
    if depth >= 3:
        return
    if type(value) is dict:
        items = [*value.keys(), *value.values()]
    elif type(value) in (list, tuple, set, frozenset):
        items = value
    else:
        return
    for count, item in enumerate(items):
        if count >= 10000:
            return
        _reject_equality_overrides(item, depth + 1)


def _guarded(candidate):
    def guarded(*args, **kwargs):
        value = candidate(*args, **kwargs)
        _reject_equality_overrides(value)
        return value

    return guarded


def _guard_checks(tree):
    """Wrap the argument of each top-level ``check(candidate)`` call in the equality guard."""
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "check"
            and len(call.args) == 1
        ):
            arg = call.args[0]
            call.args[0] = ast.copy_location(
                ast.Call(func=ast.Name("__rllm_guarded__", ast.Load()), args=[arg], keywords=[]), arg
            )
    return ast.fix_missing_locations(tree)


def _check_program(job, nonce, namespace):
    try:
        test = compile(_guard_checks(ast.parse(job["test_code"], "test.py")), "test.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        _report(nonce, "test_error", **_error_fields(exc))
        return
    namespace["__rllm_guarded__"] = _guarded
    try:
        exec(test, namespace)
    except (AssertionError, EqualityOverride) as exc:
        _print_traceback(exc)
        _report(nonce, "wrong", **_error_fields(exc))
        return
    _report(nonce, "ok")


def _drive_pytest(job, nonce, workdir):
    with open(os.path.join(workdir, "solution.py"), "w", encoding="utf-8") as fh:
        fh.write(job["code"])
    with open(os.path.join(workdir, "test_solution.py"), "w", encoding="utf-8") as fh:
        fh.write(job["test_code"])
    try:
        import pytest

        args = [
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            workdir,
            "-o",
            "addopts=",
            "test_solution.py",
        ]
        code = int(pytest.main(args))
    except SystemExit as exc:
        _report(nonce, "early_exit")
        return _exit_code(exc) or 1
    except BaseException as exc:
        _print_traceback(exc)
        _report(nonce, "runtime_error", **_error_fields(exc))
        return 1
    status = {0: "ok", 1: "wrong", 5: "test_error"}.get(code, "runtime_error")
    _report(nonce, status, pytest_exit_code=code)
    return _flush()


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    setup = recv_msg(sock)
    if setup is None:
        return
    namespaces = _become_namespace_init(sock)
    server = Server(sock, setup, namespaces)
    send_msg(sock, server.hello)
    while True:
        job = recv_msg(sock)
        if job is None:
            return
        send_msg(sock, server.run(job))


if __name__ == "__main__":
    main()
