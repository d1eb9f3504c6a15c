"""Where `egraft-opt -o PATH` writes, with the guarantees LLVM's tools give.

`mlir-opt` opens its output (`llvm::ToolOutputFile`) before it reads a byte of
input, so a bad `-o` is reported at once, and the file is removed again unless the
tool succeeds.  `OutputFile` does the same, and for a regular file goes one step
further: the result is written to a hidden temporary file beside the target and
renamed over it only on success, so a reader (or a failed run) never sees a half
written file and a failure leaves the old contents in place.  Per kind of target:

- a regular file, or a path that does not exist yet: atomic replacement.  A new file
  gets the permissions any new file gets (0666 less the umask, applied by the kernel
  when the temporary file is created); an existing file keeps its mode;
- a symbolic link: followed, so the file it points to is replaced and the link stays;
- a device, FIFO or socket (`/dev/null`, `/dev/stdout`, a named pipe), or a file reached
  through a descriptor name (`/dev/stdout` redirected to a file): written in place,
  never replaced (replacing `/dev/null` as root would swap the device for a regular
  file, and replacing the shell's file would leave the shell writing to a deleted one);
- an existing, writable regular file in a directory that refuses new files: written in
  place (truncated only once the result is ready), as a shell redirect would;
- a directory, a missing or unwritable directory, `/proc` and `/sys`: an `OutputError`
  whose message is MLIR's (`cannot open output file 'PATH': <reason>`); nothing is
  created.

`-` (stdout) is not handled here: the caller writes to its stdout stream.
"""

from __future__ import annotations

import errno
import os
import stat

_TEMP_PREFIX = ".egraft-opt-"


class OutputError(Exception):
    """The output cannot be opened or written; the message is the whole diagnostic."""


class OutputFile:
    """An output path opened for one run: `commit(data)` on success, `discard()` otherwise."""

    def __init__(self, path: str) -> None:
        """Nothing is touched until `open`: a caller can hold the object in a `try` whose
        `finally` discards it before any file exists (Ctrl-C may come at any point)."""
        self.path = path
        self._fd: int | None = None
        self._temp: str | None = None  # set for atomic replacement
        self._target = os.path.realpath(path)
        self._mode: int | None = None  # an existing regular file's mode, kept on replacement
        self._in_place = False  # a regular file written in place (its directory is not writable)

    def open(self) -> None:
        """Check the target and create what will be written; OutputError if impossible."""
        try:
            self._open()
        except OSError as e:
            raise OutputError(f"cannot open output file '{self.path}': {_reason(e)}") from None

    def _open(self) -> None:
        try:
            st = os.stat(self.path)  # the path as given: /dev/stdout names a pipe, not its realpath
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        if st is not None and not stat.S_ISREG(st.st_mode):
            # A device, FIFO or socket: written in place (opening a FIFO waits for a reader, as LLVM's does).
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
            return
        if st is not None:
            if not os.access(self._target, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
            self._mode = stat.S_IMODE(st.st_mode)
        if _names_a_descriptor(self.path):
            # /dev/stdout redirected to a file: the shell's file, written through the descriptor.
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CLOEXEC)
            self._in_place = True
            return
        try:
            self._open_temp()
        except OSError as e:
            if st is None or e.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            # The directory refuses new files but the file itself is writable: write it in
            # place, as a shell redirect would (truncated only when the result is ready).
            self._fd = os.open(self._target, os.O_WRONLY | os.O_CLOEXEC)
            self._in_place = True

    def _open_temp(self) -> None:
        directory = os.path.dirname(self._target)
        for _ in range(100):
            temp = os.path.join(directory, f"{_TEMP_PREFIX}{os.path.basename(self._target)}.{os.urandom(4).hex()}")
            self._temp = temp  # recorded first: `discard` removes it whenever it comes
            try:
                # 0o666: the kernel applies the umask, so a new file gets the usual permissions.
                self._fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            except FileExistsError:
                self._temp = None
                continue
            except OSError:
                self._temp = None
                raise
            return
        raise FileExistsError(errno.EEXIST, "no unused temporary file name")

    def commit(self, data: bytes) -> None:
        """Write `data` and put it in place; OutputError (and nothing left behind) on failure."""
        assert self._fd is not None, "output already committed or discarded"
        try:
            if self._in_place:
                os.ftruncate(self._fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
            if self._temp is not None:
                if self._mode is not None:
                    os.fchmod(self._fd, self._mode)
                fd, self._fd = self._fd, None
                os.close(fd)
                os.replace(self._temp, self._target)
                self._temp = None
        except OSError as e:
            self.discard()
            raise OutputError(f"cannot write output file '{self.path}': {_reason(e)}") from None
        self.discard()

    def discard(self) -> None:
        """Close, and remove the temporary file if the output was not committed."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)
        if self._temp is not None:
            try:
                os.unlink(self._temp)
            except FileNotFoundError:
                pass
            self._temp = None


def _names_a_descriptor(path: str) -> bool:
    """Whether `path` reaches a process's open descriptor (`/dev/stdout`, `/dev/fd/1`,
    `/proc/self/fd/1`): its realpath names no file that could be replaced."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on symbolic links in one lookup
        if current.startswith(("/proc/", "/dev/fd/")):
            return True
        if not os.path.islink(current):
            return False
        current = os.path.join(os.path.dirname(current), os.readlink(current))
    return False


def _reason(e: OSError) -> str:
    return e.strerror or str(e)
