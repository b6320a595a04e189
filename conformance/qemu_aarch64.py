"""The native library cross-built for aarch64 and run under user-mode emulation (qemu-aarch64), for the
conformance checks of the NEON kernel paths on an x86 machine.

Python and the official code cannot run under the emulator at a useful speed, so the library runs there
through a small C program, core/tests/tool_run.c (vox_engine_run: a verification entry, its inputs from
.npy files, its outputs to .npy files), and everything else (the reference, the official model, the
tolerance table) stays on the x86 side. `Aarch64Engine` wraps an x86 `vox.Engine` of the same model:
options and voices are prepared by the x86 engine (the same family code), the entry runs under the
emulator, so a family helper written for `Engine.run` (vox.families.kokoro.trace) works unchanged.

The emulated CPU is chosen with QEMU_CPU: "max" has DotProd, I8MM and BF16 (the neon-i8mm-bf16 path),
"cortex-a53" has none of them (the neon baseline); VOX_CPU can force a smaller path on "max"."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SYSROOT = os.environ.get("VOX_AARCH64_SYSROOT", "/usr/aarch64-linux-gnu")
BUILD = Path(os.environ.get("VOX_AARCH64_BUILD", ROOT / "build" / "aarch64"))
# what CI installs for this (docs/arm.md)
PACKAGES = "gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"

# the emulated CPUs and the kernel path each gives by default
CPUS = {"neon": "cortex-a53", "neon-i8mm-bf16": "max"}


def build() -> Path:
    """Cross-builds tool_run (cmake/aarch64-linux-gnu.cmake) into BUILD, reusing what is there; returns
    the program. Fails with the packages to install when the cross toolchain or qemu is missing."""
    missing = [t for t in ("aarch64-linux-gnu-gcc", "qemu-aarch64") if shutil.which(t) is None]
    if not Path(SYSROOT, "include", "stdio.h").exists():
        missing.append(f"{SYSROOT}/include (libc6-dev-arm64-cross)")
    assert not missing, f"the aarch64 checks need {', '.join(missing)}: apt-get install {PACKAGES}"
    BUILD.mkdir(parents=True, exist_ok=True)
    # one build at a time: the test files that use it may run on several pytest-xdist workers at once
    with open(BUILD / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build()


def _build() -> Path:
    if not (BUILD / "CMakeCache.txt").exists():
        r = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-DCMAKE_BUILD_TYPE=Release",
                            f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'cmake' / 'aarch64-linux-gnu.cmake'}",
                            "-DVOX_BUILD_EXAMPLES=OFF"], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    r = subprocess.run(["cmake", "--build", str(BUILD), "--target", "tool_run", "-j", "2"], capture_output=True,
                       text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return BUILD / "tool_run"


def _npy_input(name: str, value: Any) -> np.ndarray:
    """An input as Engine.run sends it: text as UTF-8 bytes, ints as int32, floats as float32."""
    if isinstance(value, str):
        return np.frombuffer(value.encode("utf-8"), np.uint8).copy()
    if isinstance(value, (bool, int, np.integer)):
        return np.asarray(int(value), np.int32)
    a = np.ascontiguousarray(value)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    if a.dtype.kind in "iu" and a.dtype != np.uint8:
        return a.astype(np.int32)
    assert a.dtype == np.uint8, f"input {name}: {a.dtype}"
    return a


def run(tool: Path, model: Path, entry: str, *, qemu_cpu: str, vox_cpu: str | None = None,
        voice: Path | None = None, seed: int | None = None, language: str | None = None,
        options: str | None = None, taps: str | None = None, inputs: Mapping[str, Any] | None = None,
        threads: int = 1, env: Mapping[str, str] | None = None, timeout: float = 900) -> tuple[dict, dict]:
    """(outputs by name, the engine's info) of one entry run by the emulated aarch64 library."""
    with tempfile.TemporaryDirectory(prefix="vox_qemu_") as d:
        d = Path(d)
        cmd = ["qemu-aarch64", "-L", SYSROOT, str(tool), str(model), entry, str(d), "-j", str(threads)]
        if voice is not None:
            cmd += ["-v", str(voice)]
        if seed is not None:
            cmd += ["-s", str(int(seed))]
        if language is not None:
            cmd += ["-l", language]
        if options is not None:
            (d / "options.json").write_text(options)
            cmd += ["-o", str(d / "options.json")]
        if taps is not None:
            cmd += ["-t", taps]
        for i, (name, value) in enumerate((inputs or {}).items()):
            if value is None:
                continue
            f = d / f"in{i}.npy"
            np.save(f, _npy_input(name, value))
            cmd.append(f"{name}={f}")
        e = dict(os.environ if env is None else env, QEMU_CPU=qemu_cpu)
        e.pop("VOX_CPU", None)
        if vox_cpu:
            e["VOX_CPU"] = vox_cpu
        r = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
        assert r.returncode == 0, f"{' '.join(cmd)}\n{r.stderr[-3000:]}"
        out: dict[str, np.ndarray] = {}
        for line in (d / "index.txt").read_text().splitlines():
            idx, name = line.split(" ", 1)
            out.setdefault(name, np.load(d / f"{idx}.npy"))
        return out, json.loads((d / "info.json").read_text())


class Aarch64Engine:
    """Engine.run of an x86 `host` engine's model, computed by the emulated aarch64 library."""

    def __init__(self, tool: Path, host, qemu_cpu: str, vox_cpu: str | None = None, threads: int = 1,
                 env: Mapping[str, str] | None = None):
        self.tool, self.host, self.qemu_cpu, self.vox_cpu, self.threads, self.env = (tool, host, qemu_cpu, vox_cpu,
                                                                                     threads, env)
        self._dir = Path(tempfile.mkdtemp(prefix="vox_qemu_voices_"))
        self._voices: dict[int, Path] = {}
        self.info: dict | None = None  # the emulated engine's, after a run

    def voice_file(self, voice) -> Path:
        """The voice saved where the emulated program reads it."""
        key = id(voice)
        if key not in self._voices:
            p = self._dir / f"v{len(self._voices)}.tvoice"
            voice.save(p)
            self._voices[key] = p
        return self._voices[key]

    def default_voice(self):
        return self.host.default_voice()

    def run(self, entry: str, voice=None, *, inputs: Mapping[str, Any] | None = None, taps=None,
            seed: int | None = None, language: str | None = None, options: Any = None, **kw) -> dict:
        opts = self.host._options(options, kw) if voice is not None else None
        return self.raw(entry, voice, seed, language, opts, taps, dict(inputs or {}))

    def raw(self, entry, voice, seed, language, options_json, taps, inputs) -> dict:
        tap = None if taps is None else taps if isinstance(taps, str) else ",".join(taps)
        out, self.info = run(self.tool, Path(self.host.model_path), entry, qemu_cpu=self.qemu_cpu,
                             vox_cpu=self.vox_cpu, voice=None if voice is None else self.voice_file(voice),
                             seed=seed, language=language, options=options_json, taps=tap, inputs=inputs,
                             threads=self.threads, env=self.env)
        return out

    def session_run(self, session, entry: str, taps=None, **inputs) -> dict:
        """Session.run: the session's voice, seed, language, options and text, on the emulated library.
        Entry "@session": the whole session instead ("audio" and the session outputs named in taps)."""
        seed, language, options = session._recipe
        return self.raw(entry, session._voice, seed, language, options, taps,
                        {"text": "".join(session._text), **inputs})
