"""Word error rate over a corpus, on normalized text (textnorm.normalize on both sides).

WER = (substitutions + deletions + insertions) / reference words, summed over the corpus (not a mean
of per-sentence rates, which would weigh a 3-word sentence like a 20-word one). Before alignment,
compounds written with and without a space are made one: when two adjacent words of one side,
joined, equal one word of the other side ("master class" / "masterclass"), the pair is joined.
"""

from __future__ import annotations

from dataclasses import dataclass

from .textnorm import normalize


@dataclass
class Score:
    errors: int
    words: int
    ref: str     # normalized reference
    hyp: str     # normalized hypothesis

    @property
    def wer(self) -> float:
        return self.errors / max(self.words, 1)


def _join_compounds(a: list[str], b: list[str]) -> list[str]:
    """a with adjacent pairs joined where the joined word occurs in b but the pair does not."""
    vocab = set(b)
    out, i = [], 0
    while i < len(a):
        if i + 1 < len(a) and a[i] + a[i + 1] in vocab and a[i] not in vocab | {a[i] + a[i + 1]}:
            out.append(a[i] + a[i + 1])
            i += 2
        else:
            out.append(a[i])
            i += 1
    return out


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def score(reference: str, hypothesis: str) -> Score:
    ref, hyp = normalize(reference).split(), normalize(hypothesis).split()
    hyp = _join_compounds(hyp, ref)
    ref = _join_compounds(ref, hyp)
    return Score(edit_distance(ref, hyp), len(ref), " ".join(ref), " ".join(hyp))


def corpus_wer(references: list[str], hypotheses: list[str]) -> tuple[float, list[Score]]:
    if len(references) != len(hypotheses):
        raise ValueError(f"{len(references)} references but {len(hypotheses)} transcripts")
    scores = [score(r, h) for r, h in zip(references, hypotheses)]
    return sum(s.errors for s in scores) / max(sum(s.words for s in scores), 1), scores
