"""Safe file output: a temporary file in the destination folder, renamed over the final name only when
complete (``os.replace`` is atomic on one file system). A crash or kill leaves at most a hidden temporary
file (``.NAME.hHOST-pPID.*.optrr-tmp``, or a ``.optrr-shuffle-hHOST-pPID-*`` folder), never a partial file under
the final name; :func:`remove_stale_temporaries` deletes those of this machine whose process is gone. HOST (a hash
of the host name) keeps a run on another machine safe when the folder is shared (a network drive): its process id
means nothing here. Inputs are never written to.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import socket
import sys
import tempfile

from ..errors import InputError

TEMP_SUFFIX = ".optrr-tmp"
SHUFFLE_PREFIX = ".optrr-shuffle-"
#: Temporary names carry the writing machine and process: ".NAME.h0a1b2c3d-p1234.xxxx.optrr-tmp",
#: ".optrr-shuffle-h0a1b2c3d-p1234-xxxx" (see :func:`pid_tag`).
_STALE = re.compile(
    r"^\..*\.h([0-9a-f]{8})-p(\d+)\.[^.]+" + re.escape(TEMP_SUFFIX) + r"$"
    r"|^" + re.escape(SHUFFLE_PREFIX) + r"h([0-9a-f]{8})-p(\d+)-"
)
_UMASK: list[int] = []


def file_mode() -> int:
    """Permissions of a newly created file under the process umask (mkstemp alone gives 0600)."""
    if not _UMASK:
        mask = None
        try:
            with open("/proc/self/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("Umask:"):
                        mask = int(line.split()[1], 8)
        except OSError:
            pass
        if mask is None:
            mask = os.umask(0o022)
            os.umask(mask)
        _UMASK.append(mask)
    return 0o666 & ~_UMASK[0]


def same_file(a, b) -> bool:
    """True when both paths name the same file (also through links or different spellings)."""
    a, b = os.fspath(a), os.fspath(b)
    if os.path.exists(a) and os.path.exists(b):
        try:
            return os.path.samefile(a, b)
        except OSError:
            pass
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def check_output_path(output, inputs=(), what: str = "output") -> str:
    """One-line errors for an output that is an input, a folder, in a missing folder, or not UTF-8 named."""
    from .formats import text_path

    output = text_path(output, what)
    if not output or output.endswith(("/", os.sep)):
        raise InputError(f"{what} path {output!r} names no file")
    for src in inputs:
        if src is not None and same_file(output, src):
            raise InputError(f"{what} {output} is the input file; choose another name (the input is never changed)")
    if os.path.isdir(output):
        raise InputError(f"{what} {output} is a folder; give a file name")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise InputError(f"the folder of {what} {output} does not exist; create it or choose another")
    return output


def check_new_output(
    path, protected=(), what: str = "output", force: bool = False, recognise=None, way_out: str = "choose another name"
) -> str:
    """``check_output_path`` plus: never one of the ``protected`` (file, role) pairs (configuration, key, audit
    record, inputs), nor an existing file that ``recognise(path)`` describes (a text such as "an OptRR secret key
    file": protected by what it holds, whatever its name), even with ``force``; an existing file only with
    ``force``. ``way_out``: what to do instead, in the messages (default "choose another name")."""
    path = check_output_path(path, [], what)
    for src, role in protected:
        if src is not None and same_file(path, src):
            raise InputError(f"{what} {path} is the {role}; {way_out} (it is never overwritten)")
    held = recognise(path) if recognise is not None and os.path.isfile(path) else None
    if held:
        raise InputError(f"{what} {path} is {held}; {way_out} (it is never overwritten, even with --force)")
    if os.path.lexists(path) and not force:
        raise InputError(f"{what} {path} exists; {way_out} or use --force to replace it")
    return path


def is_within(path, folder) -> bool:
    """True when ``path`` is ``folder`` or lies inside it (links resolved; also through different spellings)."""
    path, folder = (os.path.normcase(os.path.realpath(os.fspath(p))) for p in (path, folder))
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives (Windows)
        return False


def host_tag(hostname: str | None = None) -> str:
    """This machine in a temporary's name: "h" + 8 hex digits of the SHA-256 of its host name (as lock files of
    Mercurial or Emacs name host and process; the hash keeps the name short and free of odd characters)."""
    name = socket.gethostname() if hostname is None else hostname
    return "h" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]


def pid_tag(pid: int | None = None, hostname: str | None = None) -> str:
    """The writer's tag in a temporary's name: ``hHOST-pPID`` (this machine and process by default)."""
    return f"{host_tag(hostname)}-p{os.getpid() if pid is None else pid}"


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's process counts as alive)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would send CTRL_C_EVENT on Windows
        import ctypes

        kernel32 = ctypes.windll.kernel32
        handle = kernel32.OpenProcess(0x100000, False, pid)  # SYNCHRONIZE
        if not handle:
            return ctypes.GetLastError() == 5  # ERROR_ACCESS_DENIED: exists, not ours
        try:
            return kernel32.WaitForSingleObject(handle, 0) == 0x102  # WAIT_TIMEOUT: still running
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: another user's process
        return True
    return True


def remove_stale_temporaries(folder) -> list[str]:
    """Delete the hidden temporary files and shuffle folders in ``folder`` left by OptRR processes of this machine
    that no longer run (a killed run); returns the names removed. Another machine's temporaries (a shared folder)
    are left alone: whether its process runs cannot be told from here."""
    removed: list[str] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    here = host_tag()[1:]
    for name in names:
        m = _STALE.match(name)
        if not m:
            continue
        host, pid = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        pid = int(pid)
        if host != here or pid == os.getpid() or pid_alive(pid):
            continue
        path = os.path.join(folder, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(name)
        except OSError:
            pass
    return removed


def describe_os_error(exc: OSError, path) -> str:
    if exc.errno == errno.ENOSPC:
        reason = "the disk is full"
    elif exc.errno == errno.EDQUOT:
        reason = "the disk quota is exceeded"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "permission denied"
    else:
        reason = exc.strerror or exc.__class__.__name__
    return f"could not write {os.fspath(path)}: {reason}"


class AtomicFile:
    """``with AtomicFile(final) as tmp: write tmp.path ...; tmp.commit()``; without commit the temporary
    file is removed on exit (exceptions propagate). A ``private`` file keeps mkstemp's 0600 (readable by its owner
    only: the internal audit record and report); others get the umask's usual permissions."""

    def __init__(self, final, private: bool = False):
        self.final = os.fspath(final)
        folder = os.path.dirname(os.path.abspath(self.final))
        try:
            fd, self.path = tempfile.mkstemp(
                dir=folder, prefix=f".{os.path.basename(self.final)}.{pid_tag()}.", suffix=TEMP_SUFFIX
            )
        except OSError as exc:
            raise InputError(
                f"cannot write in folder {folder}: {describe_os_error(exc, folder).split(': ')[-1]}; "
                "choose another output folder"
            ) from None
        os.close(fd)
        if not private:
            try:
                os.chmod(self.path, file_mode())
            except OSError:
                pass
        self.committed = False

    def __enter__(self) -> AtomicFile:
        return self

    def commit(self) -> None:
        os.replace(self.path, self.final)
        self.committed = True

    def discard(self) -> None:
        if not self.committed:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass

    def __exit__(self, *exc) -> None:
        self.discard()


def write_text_atomic(path, text: str, private: bool = False) -> None:
    """Write a text file (UTF-8) through a temporary file and a rename (``private``: 0600, see AtomicFile)."""
    with AtomicFile(path, private=private) as tmp:
        try:
            with open(tmp.path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise InputError(describe_os_error(exc, path)) from None
        tmp.commit()


def write_atomic(path, write) -> str:
    """Call ``write(tmp_path)`` and rename the result to ``path`` (its folder is created if missing); on any error
    nothing appears under ``path``. For writers that take a file name (pandas, figure backends)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the output folder {folder}: {exc.strerror}") from None
    with AtomicFile(path) as tmp:
        write(tmp.path)
        tmp.commit()
    return os.fspath(path)


def sha256_file(path, ctl=None, block: int = 4 << 20) -> str:
    """SHA-256 of a file's bytes (hex), read in blocks; ``ctl`` (TaskControl) gets progress and cancel."""
    h = hashlib.sha256()
    size = max(1, os.path.getsize(path))
    done = 0
    with open(path, "rb") as fh:
        while True:
            data = fh.read(block)
            if not data:
                break
            h.update(data)
            done += len(data)
            if ctl is not None:
                ctl.check()
                ctl.report(done / size, "computing SHA-256")
    return h.hexdigest()


#: errno values of a file system without hard links (FAT, some network shares): :func:`commit_new` falls back there.
_NO_HARD_LINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK, errno.EXDEV}


def commit_new(tmp: AtomicFile) -> None:
    """Give ``tmp`` its final name only if no file has it: a rename that never replaces (``os.link`` then
    ``os.unlink`` of the temporary on POSIX, atomic: the link fails if the name exists; ``os.rename``, which never
    replaces, on Windows). Raises FileExistsError, the temporary kept (``tmp.discard()`` removes it), when a file
    has the name. On a file system without hard links the name is checked and then replaced (not atomic there)."""
    if sys.platform == "win32":
        os.rename(tmp.path, tmp.final)
        tmp.committed = True
        return
    try:
        os.link(tmp.path, tmp.final)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        if os.path.lexists(tmp.final):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), tmp.final) from None
        tmp.commit()
        return
    tmp.committed = True
    try:
        os.unlink(tmp.path)
    except OSError:
        pass  # a hidden temporary left: removed by a later run once this process is gone
