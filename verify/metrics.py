"""Error measures used by the tolerance table. Each takes (ours, official) and returns a float."""

from __future__ import annotations

import numpy as np


def _pair(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shape mismatch: {a.shape} vs official {b.shape}")
    return a, b


def max_abs(a, b) -> float:
    """max |a - b|"""
    a, b = _pair(a, b)
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def max_abs_rel(a, b) -> float:
    """max |a - b| / max |b|: the largest error relative to the signal's scale."""
    a, b = _pair(a, b)
    if not a.size:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))


def error_ratio(a, b, peer, floor: float = 2e-6, cap: float = 2e-5) -> float:
    """max_abs_rel(a, b) / (max_abs_rel(peer, b) clamped to [floor, cap]): a's distance to b over that of an
    independent implementation `peer` of the same computation. The floor keeps a very close peer from
    shrinking the allowance below it, the cap keeps a peer that is itself far off from widening it."""
    return max_abs_rel(a, b) / min(max(max_abs_rel(peer, b), floor), cap)


def rel_l2(a, b) -> float:
    """||a - b|| / ||b||"""
    a, b = _pair(a, b)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def cosine(a, b) -> float:
    a, b = _pair(a, b)
    return float(np.dot(a.ravel(), b.ravel()) / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-30))


def match_fraction(a, b) -> float:
    """Fraction of equal elements (codes, token ids)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape:
        return 0.0
    return float(np.mean(a == b)) if a.size else 1.0


def argmax_match(a, b) -> float:
    """Fraction of rows (last axis = classes) whose argmax agrees."""
    a, b = _pair(a, b)
    return float(np.mean(np.argmax(a, -1) == np.argmax(b, -1)))


def _log_softmax(x):
    m = np.max(x, -1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), -1, keepdims=True))


def mean_kl(a, b) -> float:
    """Mean over rows of KL(official || ours) between the softmax distributions of logits."""
    a, b = _pair(a, b)
    lp, lq = _log_softmax(b), _log_softmax(a)
    return float(np.mean(np.sum(np.exp(lp) * (lp - lq), -1)))


def topk_contains(a, b, k: int = 5) -> float:
    """Fraction of rows where the official argmax is among our top-k."""
    a, b = _pair(a, b)
    ref = np.argmax(b, -1)
    top = np.argsort(-a, -1)[..., :k]
    return float(np.mean(np.any(top == ref[..., None], -1)))


def wer(hypotheses, references) -> float:
    """Corpus word error rate of ASR transcripts against the texts, after normalization
    (vox.verify.perceptual.wer): errors summed over the corpus / reference words."""
    from .perceptual.wer import corpus_wer

    return corpus_wer(list(references), list(hypotheses))[0]


def wer_excess(hypotheses, baseline) -> float:
    """WER of ours minus WER of a peer on the same texts: (ours, peer) are ({"hyps", "refs"}) dicts."""
    return wer(hypotheses["hyps"], hypotheses["refs"]) - wer(baseline["hyps"], baseline["refs"])


def high_band_db(ours, official, sr: int = 24000) -> float:
    """Largest |high-band share difference| in dB over a list of utterances (perceptual.spectral)."""
    from .perceptual.spectral import compare

    return max(abs(compare(a, b, sr)["high_band_db"]) for a, b in zip(ours, official, strict=True))


def lsd_db(ours, official, sr: int = 24000) -> float:
    """Largest log-spectral distance in dB over a list of utterances (perceptual.spectral)."""
    from .perceptual.spectral import compare

    return max(compare(a, b, sr)["lsd_db"] for a, b in zip(ours, official, strict=True))


METRICS = {
    "max_abs": max_abs, "max_abs_rel": max_abs_rel, "error_ratio": error_ratio, "rel_l2": rel_l2, "cosine": cosine,
    "match_fraction": match_fraction, "argmax_match": argmax_match, "mean_kl": mean_kl,
    "top5_contains": topk_contains, "wer": wer, "wer_excess": wer_excess, "high_band_db": high_band_db,
    "lsd_db": lsd_db,
}
