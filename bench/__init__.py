"""vox.bench: speed measurements (`vox bench`), vox side by side with the official code.

    qwen3_models   full-size random-weight Qwen3-TTS checkpoints in the real shapes (built with the
                   official classes: no trained weights are reachable; speed does not need them)
    qwen3_run      one side of a benchmark (vox or official) in its own process: RTF, first chunk,
                   per-stage ms per frame, peak RSS
"""
