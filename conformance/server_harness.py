"""A real `vox serve` process for the server tests: started on a free loopback port, waited for until
/health answers, stopped at the end of its module; its log is kept, so a test can assert that no
request made it print a traceback.

    with VoxServer(["--model", str(tmod), "--voices", str(dir)]) as srv:
        srv.url            # http://127.0.0.1:PORT
        srv.log()          # everything it printed so far
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VoxServer:
    def __init__(self, args: list[str], *, api_key: str | None = None, timeout: float = 180):
        self.args, self.api_key, self.timeout = list(args), api_key, timeout
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="vox-serve-", suffix=".log", delete=False)

    def __enter__(self) -> "VoxServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        cmd = [sys.executable, "-m", "vox.cli.main", "serve", *self.args, "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "info"]
        if self.api_key:
            cmd += ["--api-key", self.api_key]
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=str(ROOT))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"vox serve exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as r:
                    if json.load(r)["status"] == "ok":
                        return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"vox serve did not answer /health within {self.timeout} s:\n{self.log()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")

    def metrics(self) -> dict[str, float]:
        """The /metrics samples as {"name{labels}": value}."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def health(self) -> dict:
        with urllib.request.urlopen(self.url + "/health", timeout=10) as r:
            return json.load(r)

    def wait_metric(self, name: str, at_least: float, timeout: float = 60) -> float:
        """Poll /metrics until the sample `name` reaches `at_least` (a count the server is about to
        update on another thread); the last value seen."""
        deadline = time.monotonic() + timeout
        v = 0.0
        while time.monotonic() < deadline:
            v = self.metrics().get(name, 0.0)
            if v >= at_least:
                return v
            time.sleep(0.05)
        return v


def tracebacks(log: str) -> list[str]:
    """The tracebacks in a server log (none may appear: a request's fault is a 4xx, not a crash)."""
    return re.findall(r"Traceback \(most recent call last\):.*?(?=\n\S|\Z)", log, flags=re.S)


# ------------------------------------------------------------------------------ audio checks
def s16(x) -> "np.ndarray":
    """The engine's float samples as the server's 16-bit PCM is defined: round(clip(x, -1, 1) * 32767)."""
    import numpy as np

    return np.rint(np.clip(np.asarray(x, np.float32), -1.0, 1.0) * 32767.0).astype(np.int16)


def decode(data: bytes, fmt: str) -> tuple["np.ndarray", int]:
    """(int16 samples, sample rate) of a response body, decoded by libsndfile (soundfile). A streamed
    FLAC says "length unknown" in its STREAMINFO; soundfile's read() seeks after every read, which a
    FLAC of unknown length refuses, so it is read with libsndfile's sequential sf_readf_short."""
    import io

    import numpy as np
    import soundfile as sf

    if fmt == "pcm":
        return np.frombuffer(data, "<i2").astype(np.int16), 24000
    if fmt != "flac":
        x, sr = sf.read(io.BytesIO(data), dtype="int16", always_2d=False)
        return x, sr
    from soundfile import _ffi, _snd  # libsndfile itself, as soundfile binds it

    with sf.SoundFile(io.BytesIO(data)) as f:
        assert f.format == "FLAC" and f.channels == 1
        parts, buf = [], np.empty(8192, np.int16)
        while True:
            n = _snd.sf_readf_short(f._file, _ffi.cast("short *", buf.ctypes.data), buf.size)
            if n <= 0:
                break
            parts.append(buf[:n].copy())
        return (np.concatenate(parts) if parts else np.zeros(0, np.int16)), f.samplerate


def best_alignment(got, want, max_lag: int = 4000) -> tuple[int, float]:
    """(lag, normalized correlation) of `want` found in `got` (a lossy codec's delay at the start):
    the lag in [0, max_lag] where the two agree best, and how well (1 = identical shape)."""
    import numpy as np

    g = np.asarray(got, np.float64)
    w = np.asarray(want, np.float64)
    n = min(len(w), len(g) - max_lag)
    if n <= 0:
        return 0, 0.0
    seg = w[:n]
    corr = np.correlate(g[:n + max_lag], seg, "valid")
    lag = int(np.argmax(corr))
    a = g[lag:lag + n]
    return lag, float(np.dot(a, seg) / (np.linalg.norm(a) * np.linalg.norm(seg) + 1e-12))
