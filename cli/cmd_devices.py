"""vox devices: what this machine offers vox."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("devices", help="list the compute devices (CPU features, memory, GPUs)",
                       description="The CPU (model, threads, the instruction-set path vox's kernels use), the "
                                   "memory this process may use, and the GPUs vox can use.")
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
        print("gpus    none (this build computes on the CPU)")
    for g in gpus:
        print(f"gpu {g.get('index')}   {g.get('name')}")
    return 0
