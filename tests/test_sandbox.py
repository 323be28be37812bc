"""Hostile programs in the real sandbox: each fails cleanly and leaves the host intact."""

from __future__ import annotations

import ast
import json
import os
import secrets
import sys
import threading
import time
from pathlib import Path

import pytest

from rllm.rewards.code import SandboxConfig, grade_code
from rllm.rewards.code.sandbox import RunResult, get_pool

# Small limits keep the hostile programs cheap for a shared 2-core machine.
CONFIG = SandboxConfig(memory_mb=512, max_processes=16, output_limit_mb=4, workers=2)
ROOT = os.geteuid() == 0


def run(code: str, time_limit: float = 10.0, stdin: str = "") -> RunResult:
    job = {
        "mode": "script",
        "code": code,
        "stdin": stdin,
        "time_limit": time_limit,
        "nonce": "n",
        "preamble": True,
    }
    with get_pool(CONFIG).server() as server:
        return server.run(job)


def grade_stdio(code: str, stdin: str = "", expected: str = "ok\n", time_limit: float = 10.0) -> dict:
    tests = {"inputs": [stdin], "outputs": [expected]}
    response = f"```python\n{code}\n```"
    return grade_code("taco", response, json.dumps(tests), timeout_per_test=time_limit, sandbox=CONFIG)


def sandbox_uid() -> int | None:
    with get_pool(CONFIG).server() as server:
        if not server.isolation:
            server.run({"mode": "script", "code": "", "time_limit": 1, "nonce": "n"})
        return server.isolation.get("uid")


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        # A zombie is already dead; it waits for the host's init to reap it.
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            found.append(int(entry.name))
    return found


def assert_healthy() -> None:
    """The sandbox still grades a normal program correctly, and no job process survived."""
    assert grade_stdio("print(input())", stdin="ok\n")["reason"] == "correct"
    uid = sandbox_uid()
    if uid is not None:
        deadline = time.monotonic() + 5  # SIGKILL delivery is asynchronous
        while processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_of(uid) == []


def test_isolation_is_complete_here():
    """On these machines (namespaces allowed) every layer must be active, not degraded: a private
    uid as root, a user and a PID namespace otherwise."""
    with get_pool(CONFIG).server() as server:
        server.run({"mode": "script", "code": "", "time_limit": 1, "nonce": "n"})
        iso = server.isolation
    assert iso["network_namespace"] and iso["private_tmp"], iso
    if ROOT:
        assert iso["uid"] is not None and iso["uid"] != 0
    else:
        assert iso["user_namespace"] and iso["pid_namespace"], iso


def test_infinite_loop_is_killed_on_time():
    start = time.monotonic()
    result = grade_stdio("while True:\n    pass", time_limit=1.0)
    assert result["reason"] == "timeout" and result["score"] == 0.0
    assert time.monotonic() - start < 6
    assert_healthy()


def test_sleeping_program_hits_the_wall_clock_not_cpu_limit():
    start = time.monotonic()
    result = grade_stdio("import time\ntime.sleep(60)", time_limit=1.0)
    assert result["reason"] == "timeout"
    assert time.monotonic() - start < 6


def test_fork_bomb_is_contained():
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    result = grade_stdio(code, time_limit=1.0)
    assert result["reason"] in ("timeout", "runtime_error")
    assert_healthy()


def test_process_limit_is_enforced():
    code = (
        "import os, time\nn = 0\n"
        "for _ in range(100):\n"
        "    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
        "    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n"
        "    n += 1\n"
        "print(n)"
    )
    result = run(code, time_limit=5)
    assert result.exit_code == 0, result.stderr
    assert 0 < int(result.stdout) < CONFIG.max_processes
    assert result.leftover_processes
    assert_healthy()


def test_escaped_daemon_is_killed():
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n    os._exit(0)\n"
        "print('ok')"
    )
    result = grade_stdio(code)
    assert result["reason"] == "correct"
    assert_healthy()


@pytest.mark.parametrize(
    "code",
    ["x = bytearray(2 * 1024**3)", "chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 1024**2))"],
    ids=["at-once", "gradual"],
)
def test_memory_bomb(code):
    result = grade_stdio(code)
    assert result["reason"] == "memory_limit", result
    assert_healthy()


def test_huge_output_is_cut():
    result = grade_stdio("while True:\n    print('x' * 10000)")
    assert result["reason"] == "output_limit", result
    assert_healthy()


def test_huge_file_is_cut():
    result = grade_stdio("with open('big', 'wb') as f:\n    while True:\n        f.write(b'x' * 2**20)")
    assert result["reason"] == "output_limit", result


def test_writes_outside_the_temp_dir_do_not_reach_the_host(tmp_path):
    token = secrets.token_hex(8)
    targets = [
        f"/tmp/rllm-hostile-{token}",
        f"/var/tmp/rllm-hostile-{token}",
        f"/dev/shm/rllm-hostile-{token}",
        str(tmp_path / f"hostile-{token}"),
        str(Path.cwd() / f"hostile-{token}"),
        f"/etc/rllm-hostile-{token}",
    ]
    code = f"for p in {targets!r}:\n    try:\n        open(p, 'w').write('x')\n    except OSError:\n        pass\nprint('ok')"
    assert grade_stdio(code)["reason"] == "correct"
    for target in targets:
        assert not os.path.exists(target), target


def test_temp_dir_is_private_and_removed():
    first = run(
        "import os\nopen('mark', 'w').write('x')\nopen('/tmp/mark2', 'w').write('x')\nprint(os.getcwd())"
    )
    second = run("import os\nprint(os.path.exists('mark'), os.path.exists('/tmp/mark2'), os.listdir('.'))")
    assert first.exit_code == 0 and second.stdout.split() == ["False", "False", "['solution.py']"]
    assert not os.path.exists(os.path.join(first.stdout.strip(), "mark"))


def test_grader_environment_is_not_visible(monkeypatch):
    secret = secrets.token_hex(16)
    monkeypatch.setenv("RLLM_TEST_SECRET", secret)
    code = (
        "import os\nprint(dict(os.environ))\n"
        f"for pid in ({os.getpid()}, {os.getppid()}, os.getppid()):\n"
        "    try:\n        print(open(f'/proc/{pid}/environ').read())\n    except OSError as e:\n        print(e)"
    )
    result = run(code)
    assert result.exit_code == 0, result.stderr
    assert secret not in result.stdout
    assert "RLLM_TEST_SECRET" not in result.stdout


def test_network_is_unreachable():
    code = (
        "import socket\n"
        "for host in ('1.1.1.1', '127.0.0.1', 'pypi.org'):\n"
        "    try:\n        socket.create_connection((host, 80), timeout=1)\n        print('connected', host)\n"
        "    except OSError:\n        print('blocked', host)"
    )
    result = run(code, time_limit=5)
    assert result.exit_code == 0, result.stderr
    assert "connected" not in result.stdout and result.stdout.count("blocked") == 3


def test_killing_the_parent_and_everyone_fails():
    code = (
        "import os, signal\n"
        f"for target in (os.getppid(), {os.getpid()}):\n"
        "    for kill in (os.kill, os.killpg):\n"
        "        try:\n            kill(target, signal.SIGKILL)\n        except OSError:\n            pass\n"
        "os.kill(-1, signal.SIGKILL)\n"
        "print('ok')"
    )
    result = grade_stdio(code)
    # As its own uid the program can only kill itself (kill -1 includes the caller).
    assert result["reason"] in ("runtime_error", "correct")
    assert_healthy()


def test_prints_expected_output_but_exits_nonzero():
    for code in ("print('ok')\nimport sys\nsys.exit(3)", "print('ok')\nraise RuntimeError('late')"):
        result = grade_stdio(code)
        assert result["reason"] == "runtime_error" and not result["acc"], result


def test_closed_stdout_fails_cleanly():
    for code in ("import os\nos.close(1)\nprint('ok')", "import sys\nsys.stdout.close()\nprint('ok')"):
        result = grade_stdio(code)
        assert result["reason"] == "runtime_error" and not result["acc"], result
    assert_healthy()


LEETCODE_TESTS = json.dumps(
    {"functional": "def check(candidate):\n    assert candidate(2) == 4\n\ncheck(Solution().double)"}
)


@pytest.mark.parametrize(
    "trick",
    [
        "import os\nos._exit(0)",
        "import sys\nsys.exit(0)",
        "raise SystemExit",
        'import os\nos.write(3, b\'{"status": "ok"}\')\nos._exit(0)',
        "import os, threading\nthreading.Thread(target=lambda: os._exit(0)).start()\nimport time\ntime.sleep(1)",
        "import atexit, os\natexit.register(lambda: os._exit(0))\nraise SystemExit(0)",
    ],
    ids=["os._exit", "sys.exit", "SystemExit", "forged-report", "exit-from-thread", "atexit"],
)
def test_exit_tricks_are_not_success(trick):
    code = f"class Solution:\n    def double(self, x):\n        return x + 1\n{trick}\n"
    result = grade_code("leetcode", f"```python\n{code}```", LEETCODE_TESTS, sandbox=CONFIG)
    assert not result["acc"] and result["score"] == 0.0, result


def test_exit_trick_in_stdio_needs_the_right_output():
    assert grade_stdio("import os\nos._exit(0)")["reason"] == "wrong"


def test_home_directories_are_hidden():
    result = run(
        "import os\nfor d in ('/root', '/home'):\n    print(d, sorted(os.listdir(d)) if os.path.isdir(d) else [])"
    )
    assert result.exit_code == 0, result.stderr
    seen = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in result.stdout.splitlines()}
    interpreter_dirs = {part for part in Path(sys.base_prefix).parts}
    for name in ("/root", "/home"):
        listing = ast.literal_eval(seen[name])
        assert set(listing) <= interpreter_dirs, (name, listing)


def test_a_crashed_fork_server_is_replaced():
    assert grade_stdio("print(input())", stdin="ok\n")["acc"]
    with get_pool(CONFIG).server() as server:
        server._proc.kill()
        server._proc.wait()
    assert_healthy()


def test_a_fork_server_dying_mid_job_is_retried():
    from rllm.rewards.code.grader import _run

    job = {"mode": "script", "code": "import time\ntime.sleep(1)\nprint('ok')", "time_limit": 5, "nonce": "n"}
    with get_pool(CONFIG).server() as server:
        server.run({**job, "code": ""})
        threading.Timer(0.3, server._proc.kill).start()
        outcome = _run(server, job)
    assert isinstance(outcome, RunResult) and outcome.stdout == "ok\n"
    assert_healthy()


ALWAYS_EQUAL = "class Anything:\n    def __eq__(self, other):\n        return True\n    __ne__ = lambda self, other: False\n"


@pytest.mark.parametrize(
    "returned",
    ["Anything()", "[Anything()]", "type('Int', (int,), {'__eq__': lambda s, o: True})(0)"],
    ids=["object", "inside-a-list", "int-subclass"],
)
def test_always_equal_objects_are_rejected(returned):
    code = f"{ALWAYS_EQUAL}class Solution:\n    def double(self, x):\n        return {returned}\n"
    result = grade_code("leetcode", f"```python\n{code}```", LEETCODE_TESTS, sandbox=CONFIG)
    assert result["reason"] == "wrong" and "defined by the program" in result["message"], result


def test_equality_guard_allows_library_and_plain_classes():
    code = "class Solution:\n    def double(self, x):\n        return Counter({'a': x * 2})['a']\n"
    assert grade_code("leetcode", f"```python\n{code}```", LEETCODE_TESTS, sandbox=CONFIG)["acc"]
    tests = json.dumps(
        {
            "functional": "def check(candidate):\n    assert candidate(2) == Counter(a=2)\n"
            "    assert candidate(3).val == 3\n\ncheck(Solution().make)"
        }
    )
    code = (
        "class Node(dict):\n    pass\n"
        "class Solution:\n    def make(self, x):\n        n = Node(a=x)\n        n.val = x\n        return n\n"
    )
    assert grade_code("leetcode", f"```python\n{code}```", tests, sandbox=CONFIG)["acc"]


def test_output_and_traceback_survive_a_failing_exit():
    exited = run("import sys\nprint('ok')\nsys.exit(3)")
    assert (exited.exit_code, exited.stdout) == (3, "ok\n")
    crashed = run("print('ok')\nx = 1 / 0")
    assert crashed.exit_code == 1 and crashed.stdout == "ok\n"
    assert 'File "solution.py", line 2' in crashed.stderr and "x = 1 / 0" in crashed.stderr
    assert "zygote" not in crashed.stderr  # the driver's own frames are not shown


def test_diagnostic_command_reports_full_isolation():
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "rllm.rewards.code.sandbox"], capture_output=True, text=True, timeout=120
    )
    report = json.loads(proc.stdout)
    assert report["network_namespace"] and report["private_tmp"]
    assert proc.returncode == 0, proc.stderr  # complete: a private uid (root) or user+PID namespaces
