"""The WER normalizer and scorer of the perceptual gate (vox.verify.perceptual): what a TTS frontend
speaks and what an ASR model writes must meet in one spelling, and nothing else may be merged away."""

from __future__ import annotations

import pytest

from vox.verify.perceptual.textnorm import cardinal, normalize, ordinal, year
from vox.verify.perceptual.wer import corpus_wer, score

# (written form, another way the same words can be written): must normalize equal
SAME = [
    ("The jacket costs $49.99.", "the jacket costs forty-nine dollars and ninety-nine cents"),
    ("He paid £12 for it.", "He paid twelve pounds for it"),
    ("Prices rose by 15%.", "prices rose by fifteen per cent"),
    ("The train leaves at 7:45.", "The train leaves at seven forty-five."),
    ("We meet at 3:00.", "we meet at three o'clock"),
    ("Dr. Patel will see you at 3:30.", "Doctor Patel will see you at 3.30."),   # whisper's clock times
    ("The museum opened on March 3rd, 2021.", "The museum opened on March third, twenty twenty-one."),
    ("She was born in 1947.", "she was born in nineteen forty seven"),
    ("It closed in 1905.", "it closed in nineteen oh five"),
    ("In 2024 we moved.", "in two thousand and twenty four we moved"),
    ("The population grew to 2,500 people.", "The population grew to two thousand five hundred people."),
    ("About 1,500 people came.", "about fifteen hundred people came"),
    ("Add 2.5 cups.", "add two point five cups"),
    ("Dr. Patel and Mr. Lee", "Doctor Patel and mister Lee"),
    ("Mrs. Brown vs. Mr. Green", "missus brown versus mister green"),
    ("It's 7 a.m.", "its seven AM"),
    ("a hundred and five", "105"),
    ("The company earned $2 million.", "The company earned two million dollars."),
    ("It weighs 3 kg.", "it weighs three kilograms"),
    ("Our team finished 1st out of 12.", "our team finished first out of twelve"),
    ("the 22nd of June", "the twenty-second of June"),
]
# pairs that say different things: must stay different
DIFFERENT = [
    ("He paid $12.", "He paid twelve."),                     # the currency word is spoken
    ("Prices rose by 15%.", "prices rose by fifteen"),
    ("at 7:45", "at seven point four five"),
    ("add 2.50 cups", "add two fifty cups"),                # H.MM is a time only after "at", "by", ...
    ("Is it open?", "it is open"),
    ("in 1947", "in nineteen forty"),
    ("two dogs and three cats", "two dogs three cats"),     # a conjunction between words is not a filler
]


@pytest.mark.parametrize("a,b", SAME)
def test_same_words_normalize_equal(a, b):
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize("a,b", DIFFERENT)
def test_different_words_stay_different(a, b):
    assert normalize(a) != normalize(b)


def test_number_words():
    assert cardinal(0) == "zero"
    assert cardinal(115) == "one hundred fifteen"
    assert cardinal(1_002_003) == "one million two thousand three"
    assert ordinal(21) == "twenty first" and ordinal(12) == "twelfth" and ordinal(40) == "fortieth"
    assert year(1999) == "nineteen ninety nine" and year(1900) == "nineteen hundred" and year(2024) == "twenty twenty four"


def test_wer_counts_errors_over_the_corpus():
    # 1 substitution in 4 words + 1 deletion in 2 words = 2 errors / 6 words
    w, scores = corpus_wer(["the cat sat down", "hello there"], ["the cat sat up", "hello"])
    assert [s.errors for s in scores] == [1, 1]
    assert w == pytest.approx(2 / 6)
    assert score("", "noise words").errors == 2       # insertions count against an empty reference
    assert score("a masterclass today", "a master class today").errors == 0   # compound spacing
    assert score("a master plan", "a masterplan").errors == 0
    assert score("the master said", "the masters aid").errors == 2
