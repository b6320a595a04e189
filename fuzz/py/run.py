"""Run one Python fuzz target of fuzz/py/targets.py under atheris (libFuzzer's engine, coverage of the
Python code of vox's readers).

    python fuzz/py/run.py TARGET [libFuzzer options and corpus directories]
    python fuzz/py/run.py torch_pickle -max_total_time=60 build/fuzz/corpus/torch_pickle fixtures/fuzz/torch_pickle

atheris (PyPI) is needed only here; scripts/fuzz.sh runs every target this way.
"""

from __future__ import annotations

import os
import sys

import atheris

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import targets  # noqa: E402

# Import what the targets import lazily, then instrument every loaded function's bytecode in place:
# instrument_imports() skips modules that an editable install's import hook loads (vox's is one).
# VOX_FUZZ_PY_SCOPE=vox instruments vox's own functions (and the targets and zipfile) only: the
# short CI run starts in about a second instead of the ~25 s that instrumenting numpy, soundfile and
# the rest of the standard library costs; campaigns instrument everything (coverage guidance reaches
# into the library code the readers drive).
import vox.families.kokoro.convert  # noqa: F401,E402
import vox.families.kokoro.frontend_data  # noqa: F401,E402
import vox.convert.onnx_proto  # noqa: F401,E402
import vox.formats.audio  # noqa: F401,E402
import vox.formats.bounded  # noqa: F401,E402
import vox.formats.native  # noqa: F401,E402
import vox.formats.tmod  # noqa: F401,E402
import vox.formats.torch_pickle  # noqa: F401,E402
import vox.formats.tvoice  # noqa: F401,E402
import vox.reference.common.safetensors  # noqa: F401,E402
import vox.reference.kokoro.frontend.frontend  # noqa: F401,E402


def _instrument_vox_only() -> None:
    import gc
    import types

    own = ("vox", "targets", "zipfile")
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and isinstance(getattr(obj, "__module__", None), str) \
                and obj.__module__.split(".")[0] in own and obj.__module__ in sys.modules:
            atheris.instrument_func(obj)


if os.environ.get("VOX_FUZZ_PY_SCOPE", "all") == "vox":
    _instrument_vox_only()
else:
    atheris.instrument_all()


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in targets.TARGETS:
        sys.exit(f"usage: run.py TARGET [libFuzzer args]; targets: {', '.join(targets.TARGETS)}")
    fn = targets.TARGETS[sys.argv[1]]
    atheris.Setup([sys.argv[0]] + sys.argv[2:], fn)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
