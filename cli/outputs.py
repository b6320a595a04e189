"""Where the commands write: output paths are checked before any work, and files are written whole.

Rules (docs/reliability.md): an output is a regular file, or "-" for standard output. An existing
regular file is replaced only with --force, keeping its permissions; a device, FIFO, socket or
directory is never replaced, --force or not. New files get the permissions the umask allows. A file
is written to a temporary name beside it and renamed into place, so a full disk or an interruption
leaves the old file (or none), never half of one; such failures are one line and a non-zero exit.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile

import numpy as np


def check_output(path: str, force: bool) -> None:
    """Refuse an output path before any work is done."""
    if path == "-":
        if sys.stdout is None:
            raise OSError("standard output is closed: give -o FILE")
        return
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
            raise OSError(f"{path} is {kind}: vox writes regular files only (or - for standard output)")
        if not force:
            raise FileExistsError(f"{path} exists (use --force to overwrite)")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise FileNotFoundError(f"{d}: no such directory")


def _umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def write_atomic(path: str, write) -> None:
    """Call write(tmp_path) to fill a temporary file beside `path`, then rename it into place with the
    permissions the old file had (or the umask's, for a new one). "-" is not handled here."""
    d = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=".vox-", suffix=".tmp", dir=d)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, mode)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            raise OSError(errno.ENOSPC, f"{path}: no space left on the device; nothing was written") from None
        raise


def write_stdout(data: bytes) -> None:
    """Bytes on standard output, flushed; a failure (a full disk behind a redirection, a closed
    stream) is one line naming standard output, not a bare errno."""
    if sys.stdout is None:
        raise OSError("standard output is closed")
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        raise  # the reader went away: not an error of ours (cli/main.py)
    except OSError as e:
        what = "no space left on the device" if e.errno == errno.ENOSPC else (e.strerror or str(e)).lower()
        raise OSError(e.errno, f"writing to standard output: {what}; the output is incomplete") from None


def write_wav(path: str, samples: np.ndarray, sample_rate: int, float32: bool = False) -> None:
    """A WAV file (16-bit PCM, or 32-bit float), or WAV bytes on standard output for "-"."""
    import io

    import soundfile as sf

    x = np.asarray(samples, dtype=np.float32)
    subtype = "FLOAT" if float32 else "PCM_16"
    if path == "-":
        buf = io.BytesIO()
        sf.write(buf, x, sample_rate, subtype=subtype, format="WAV")
        write_stdout(buf.getvalue())
        return

    def write(tmp: str) -> None:
        try:
            sf.write(tmp, x, sample_rate, subtype=subtype, format="WAV")
        except (RuntimeError, sf.LibsndfileError) as e:  # libsndfile reports a full disk as its own error
            full = "No space" in str(e) or _free_bytes(tmp) < x.nbytes
            raise OSError(errno.ENOSPC if full else errno.EIO, f"{path}: cannot write the WAV ({e})") from None

    write_atomic(path, write)


def _free_bytes(path: str) -> int:
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)))
        return st.f_bavail * st.f_frsize
    except OSError:
        return 1 << 62
