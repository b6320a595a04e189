"""vox devices: what this machine offers vox."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("devices", help="list the compute devices (CPU features, memory, GPUs)",
                       description="The CPU (model, threads, the instruction-set path vox's kernels use), the "
                                   "memory this process may use, and the Vulkan devices vox can use "
                                   "(--device vulkan:N; free memory from VK_EXT_memory_budget, else an "
                                   "estimate).")
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
    print(f"cpu     {c['name']}, {c['threads']} threads; kernels: {c['kernels']} (features: {feats})")
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
        print(f"vulkan:{g['index']}  {g['name']} ({g['type']}), {free:.1f} GiB free{est} of "
              f"{g['memory_total'] / 2**30:.1f} GiB, subgroup {g['subgroup_size']}{cm}{soft}")
    if gpus:
        print("        Vulkan numbering differs from nvidia-smi and CUDA: identify a device by its name.")
    return 0
