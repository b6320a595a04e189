"""vox.reference: the numpy golden implementation of every model vox runs.

Written to be read beside the official PyTorch code and the papers: one folder per family, one
module per stage, numpy only (no torch, no vox native code). The conformance suite proves that it
matches the official code; the native core is then proven against it.

    reference.common    checkpoints (safetensors), shared layers, Philox
    reference.qwen3     Qwen3-TTS-12Hz: prompts, talker, code predictor, sampling, codec decoder,
                        mel, ECAPA-TDNN speaker encoder, Mimi encoder + RVQ, resampling
"""
