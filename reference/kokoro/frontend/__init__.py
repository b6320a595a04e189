"""The Kokoro English text frontend (the spec of core/src/kokoro/text/): the shared normalization
(reference/text: numbers, currency, dates, times, abbreviations -> words), G2P over the misaki lexicon
with an out-of-vocabulary chain, and sentence chunking. Pure Python, no misaki import.

    lexicon.py    the packed lexicon (vox.families.kokoro.frontend_data) read by binary search
    lts.py        letter-to-sound rules for words no other step covers
    g2p.py        words -> phonemes: overrides, lexicon, suffixes, compounds, rules
    chunk.py      text -> sentence spans, incremental
    frontend.py   Frontend: the whole path, as the C core runs it
"""
