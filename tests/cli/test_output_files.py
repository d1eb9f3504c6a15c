"""`egraft-opt -o PATH` writes as LLVM's tools do (passes/cli/output_file.py).

Regular files are replaced atomically and only on success, new files get the umask's
permissions and existing ones keep theirs, links are followed, devices and FIFOs are
written in place; every failure is one `error:` line, exit 1, and leaves nothing behind.
"""

from __future__ import annotations

import ctypes
import os
import stat
import threading
from pathlib import Path

import pytest

from .tool import GOOD, assert_one_error_line, run, run_process

EXPECTED = run(str(GOOD))[1]
IS_ROOT = os.geteuid() == 0


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".egraft-opt-"))


def test_new_file_gets_the_permissions_of_the_umask(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    old = os.umask(0o027)
    try:
        code, stdout, err = run(str(GOOD), "-o", str(out))
    finally:
        os.umask(old)
    assert (code, stdout, err) == (0, "", "")
    assert out.read_text() == EXPECTED
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.mlir"]


def test_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    out.write_text("old")
    out.chmod(0o604)
    assert run(str(GOOD), "-o", str(out))[0] == 0
    assert out.read_text() == EXPECTED
    assert stat.S_IMODE(out.stat().st_mode) == 0o604


def test_symlink_is_followed_and_stays(tmp_path: Path) -> None:
    real, link = tmp_path / "real.mlir", tmp_path / "link.mlir"
    real.write_text("old")
    link.symlink_to(real)
    assert run(str(GOOD), "-o", str(link))[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == EXPECTED
    dangling = tmp_path / "dangling.mlir"
    dangling.symlink_to(tmp_path / "target.mlir")
    assert run(str(GOOD), "-o", str(dangling))[0] == 0
    assert dangling.is_symlink() and (tmp_path / "target.mlir").read_text() == EXPECTED
    assert leftovers(tmp_path) == []


def test_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = run(str(GOOD), "-o", str(fifo))
    reader.join(timeout=60)
    assert (code, err) == (0, "")
    assert received == [EXPECTED.encode()]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not IS_ROOT, reason="mknod of a character device needs root")
def test_devices_are_written_in_place_never_replaced(tmp_path: Path) -> None:
    """The /dev/null reproducer, on a private node with /dev/null's numbers (the real
    one is never touched); /dev/full's numbers give a write error."""
    null, full = tmp_path / "fakenull", tmp_path / "fakefull"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    assert run(str(GOOD), "-o", str(null)) == (0, "", "")
    st = null.lstat()
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    code, _, err = run(str(GOOD), "-o", str(full))
    assert code == 1
    assert_one_error_line(err, f"cannot write output file '{full}': No space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["missing directory", "/proc", "/sys", "a directory"])
def test_unopenable_outputs_are_one_error_line(tmp_path: Path, kind: str) -> None:
    target = {"missing directory": str(tmp_path / "no" / "such" / "dir" / "out.mlir"),
              "/proc": "/proc/x", "/sys": "/sys/kernel/x", "a directory": str(tmp_path)}[kind]
    code, out, err = run(str(GOOD), "-o", target)
    assert (code, out) == (1, "")
    assert_one_error_line(err, f"egraft-opt: error: cannot open output file '{target}': ")
    assert list(tmp_path.iterdir()) == []
    assert not os.path.exists("/proc/x") and not os.path.exists("/sys/kernel/x")


def _drop_permission_overrides() -> None:
    """In the child, before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the
    bounding set, so that root's new program obeys file modes like any user."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _may_drop_capabilities() -> bool:
    """CAP_SETPCAP (bit 8) in this process's effective set: PR_CAPBSET_DROP is allowed."""
    status = Path("/proc/self/status").read_text()
    effective = next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff:"))
    return bool(int(effective, 16) >> 8 & 1)


@pytest.mark.skipif(IS_ROOT and not _may_drop_capabilities(),
                    reason="as root without CAP_SETPCAP no process can be made to obey file modes")
def test_read_only_directory(tmp_path: Path) -> None:
    """As root (which may write anywhere), egraft-opt runs without its permission overrides."""
    ro = tmp_path / "ro"
    ro.mkdir()
    existing = ro / "existing.mlir"
    existing.write_text("old")
    ro.chmod(0o555)
    target = ro / "out.mlir"

    def egraft_opt(*argv: str) -> tuple[int, str]:
        if IS_ROOT:
            proc = run_process(*argv, preexec_fn=_drop_permission_overrides)
            return proc.returncode, proc.stderr.decode()
        code, _, err = run(*argv)
        return code, err

    try:
        code, err = egraft_opt(str(GOOD), "-o", str(target))
        assert code == 1
        assert_one_error_line(err, f"cannot open output file '{target}': Permission denied")
        # A writable file in it is written in place, as a shell redirect would.
        assert egraft_opt(str(GOOD), "-o", str(existing)) == (0, "")
        assert existing.read_text() == EXPECTED
        assert sorted(p.name for p in ro.iterdir()) == ["existing.mlir"]
    finally:
        ro.chmod(0o755)


def test_failed_run_leaves_the_old_output(tmp_path: Path) -> None:
    out = tmp_path / "out.mlir"
    out.write_text("old")
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  %0 = arith.constant : i32\n}\n")
    code, _, err = run(str(bad), "-o", str(out))
    assert code == 1 and f"{bad}:2:" in err
    assert out.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_dash_is_stdout_and_binary_output_is_not_decoded() -> None:
    assert run(str(GOOD), "-o", "-") == (0, EXPECTED, "")
    proc = run_process(str(GOOD), "--output-format=pb")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b"\n") and b"MatMul" in proc.stdout  # a binary GraphDef on stdout
