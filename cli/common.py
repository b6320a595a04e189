"""Options and helpers shared by the synthesis commands (say, voice, bench)."""

from __future__ import annotations

import argparse
import os
import sys


def add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine")
    g.add_argument("--model", "-m", metavar="FILE",
                   help="the .tmod model (see `vox build`; default: the built-in Kokoro-82M, `vox models`)")
    g.add_argument("--device", default="cpu", help="compute device: cpu (default), auto, gpu[:N] or vulkan[:N] (vox devices lists them), then ,strict (too little video memory is an error, not a fallback) and ,codec=cpu")
    g.add_argument("--threads", type=int, default=0, help="compute threads (default: every CPU this process may use)")
    g.add_argument("--affinity", metavar="CPUS", help='pin the compute threads to these CPUs, e.g. "0-3,6"')
    g.add_argument("--nice", type=int, default=0, help="run the compute threads at this added nice value")


def add_sampling_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sampling (defaults: the model's generation config)")
    g.add_argument("--seed", type=int, default=0, help="the same seed gives the same audio (default 0)")
    g.add_argument("--language", help='language of the text: "auto" or one of the model\'s (vox inspect)')
    g.add_argument("--temperature", type=float)
    g.add_argument("--top-k", type=int)
    g.add_argument("--top-p", type=float)
    g.add_argument("--repetition-penalty", type=float)
    g.add_argument("--greedy", action="store_true", help="no sampling: always the most likely code")
    g.add_argument("--max-new-tokens", type=int,
                   help="stop after this many talker steps (default: a guard that grows with the text)")
    g.add_argument("--decoder", choices=("stream", "reference"), default="stream",
                   help="stream: seamless streaming decoder (default); reference: the official chunked decode, "
                        "for A/B comparisons (audio arrives at the end)")
    g.add_argument("--context", type=int, default=None, metavar="N",
                   help="stream decoder warm-up: last N reference frames (-1: all; default 50)")
    g.add_argument("--chunk-frames", type=int, default=None, metavar="N",
                   help="codec frames per audio chunk (default 4 = 320 ms)")


def sampling_kwargs(a) -> dict:
    kw = dict(temperature=a.temperature, top_k=a.top_k, top_p=a.top_p, repetition_penalty=a.repetition_penalty,
              max_new_tokens=a.max_new_tokens, decoder_context=a.context, chunk_frames=a.chunk_frames)
    if a.greedy:
        kw.update(do_sample=False, subtalker_do_sample=False)
    return {k: v for k, v in kw.items() if v is not None}


def open_engine(a):
    import vox

    if a.model is None:  # the default model, built into the cache on first use (vox.models)
        from vox.models import ensure_default_model

        a.model = str(ensure_default_model(quiet=getattr(a, "quiet", False)))
    if not os.path.exists(a.model):
        raise FileNotFoundError(f"{a.model}: no such file")
    res = vox.Resources(device=a.device, threads=a.threads, cpu_affinity=a.affinity, nice=a.nice)
    return vox.Engine(a.model, resources=res)


def check_output(path: str, force: bool) -> None:
    if path != "-" and os.path.exists(path) and not force:
        raise FileExistsError(f"{path} exists (use --force to overwrite)")
    d = os.path.dirname(os.path.abspath(path))
    if path != "-" and not os.path.isdir(d):
        raise FileNotFoundError(f"{d}: no such directory")


def read_text(a) -> str:
    if a.stdin:
        text = sys.stdin.read()
    elif a.text is not None:
        text = a.text
    else:
        raise ValueError("give the text to speak, or --stdin")
    if not text.strip():
        raise ValueError("the text is empty")
    return text
