"""vox devices: what this machine offers vox."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("devices", help="list the compute devices (CPU paths, memory, GPUs)",
                       description="The CPU (model, threads, the kernel path vox uses and why, every kernel path "
                                   "with whether this CPU has it), the memory this process may use, and the "
                                   "Vulkan devices vox can use (--device vulkan:N; free memory from "
                                   "VK_EXT_memory_budget, else an estimate). VOX_CPU=NAME forces a kernel path "
                                   "(auto, the default, is the best this CPU has); a path the CPU lacks is "
                                   "refused when an engine is created, never replaced by another.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(a) -> int:
    import vox

    d = vox.devices()
    if a.json:
        print(json.dumps(d, indent=1))
        return 0
    c = d["cpu"]
    feats = ", ".join(k for k, v in c["features"].items() if v) or "none"
    print(f"cpu     {c['name']}, {c['threads']} threads (features: {feats})")
    print(f"kernels {c['kernels']}: {c['kernels_why']}")
    if c.get("error"):
        print(f"        refused: {c['error']}")
    dots = c["dots"]
    print(f"        int8 convolutions: {dots['int8'] or 'none (f32)'}; bf16 convolutions: {dots['bf16'] or 'none (f32)'}; "
          f"q8 GEMM tiles: {dots.get('q8') or 'none (the q8 GEMV kernels)'}")
    paths = c["paths"]
    have = [p["name"] for p in paths if p["supported"]]
    lack = [f"{p['name']} (needs {p['needs']})" for p in paths if not p["supported"]]
    print(f"paths   this CPU has: {', '.join(have)}" + (f"; not supported on this CPU: {', '.join(lack)}" if lack else ""))
    print(f"memory  {d['memory_bytes'] / 2**30:.1f} GiB available to this process")
    gpus = d.get("gpus", [])
    if not gpus:
        why = d.get("vulkan", {}).get("reason") or "none found"
        print(f"gpus    none ({why}); --device auto runs on the CPU")
    for g in gpus:
        free = g["memory_free"] / 2**30
        est = " (estimate)" if g.get("memory_free_estimated") else ""
        soft = "; software renderer, never chosen by --device auto" if g.get("software") else ""
        cm = (f"; tensor cores (cooperative matrix {g['cooperative_matrix_shapes']})" if g.get("cooperative_matrix")
              else "; no cooperative matrices (prefill on the tiled GEMM)")
        if g.get("cooperative_matrix2"):
            cm += f", VK_NV_cooperative_matrix2 ({g['cooperative_matrix2_shapes']}: the DiT's products)"
        print(f"vulkan:{g['index']}  {g['name']} ({g['type']}), {free:.1f} GiB free{est} of "
              f"{g['memory_total'] / 2**30:.1f} GiB, subgroup {g['subgroup_size']}{cm}{soft}")
    if gpus:
        print("        Vulkan numbering differs from nvidia-smi and CUDA: identify a device by its name.")
    return 0
