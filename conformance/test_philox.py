"""Philox4x32-10: known answers, native == reference, and the position-addressed stream properties."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import vox
from vox._native import ffi, lib
from vox.reference.common import philox
from vox.verify.tolerance import Row

# Random123 kat_vectors, "philox4x32 10" lines: counter[4], key[2] -> output[4]
KAT = [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
]

u32 = st.integers(0, 2**32 - 1)
u64 = st.integers(0, 2**64 - 1)


def native_block(ctr, key):
    out = ffi.new("uint32_t[4]")
    lib.vox_philox4x32_10(ffi.new("uint32_t[4]", list(ctr)), ffi.new("uint32_t[2]", list(key)), out)
    return list(out)


def test_known_answers(record):
    py = [philox.philox4x32_10(c, k).tolist() == want for c, k, want in KAT]
    c = [native_block(c, k) == want for c, k, want in KAT]
    record([Row("philox.known_answers", "reference (numpy), 3 Random123 vectors", float(np.mean(py))),
            Row("philox.known_answers", "core/src/philox.c, 3 Random123 vectors", float(np.mean(c)), backend="cpu")])


def test_native_matches_reference(record):
    rng = np.random.default_rng(7)
    n = 2000
    seeds = rng.integers(0, 2**63, n, dtype=np.uint64).tolist()
    frames = rng.integers(0, 2**32, n, dtype=np.uint64).tolist()
    books = rng.integers(0, 16, n).tolist()
    ours = np.array([vox.philox_uniform(s, f, b) for s, f, b in zip(seeds, frames, books)])
    ref = np.array([philox.uniform(s, f, b) for s, f, b in zip(seeds, frames, books)])
    record(Row("philox.c_vs_python", f"{n} random (seed, frame, codebook) uniforms, bit-exact",
               float(np.mean(ours == ref)), backend="cpu"))


@settings(max_examples=200, deadline=None)
@given(ctr=st.lists(u32, min_size=4, max_size=4), key=st.lists(u32, min_size=2, max_size=2))
def test_block_native_equals_reference(ctr, key):
    assert native_block(ctr, key) == philox.philox4x32_10(ctr, key).tolist()


@settings(max_examples=100, deadline=None)
@given(seed=u64, n_frames=st.integers(1, 64), chunk=st.integers(1, 16), perm_seed=st.integers(0, 2**32 - 1))
def test_stream_independent_of_chunking_and_order(seed, n_frames, chunk, perm_seed):
    """The uniforms of a frame depend only on (seed, frame, codebook): computing frames in chunks of
    any size, or in any order, gives the same values as computing them all at once."""
    frames = np.arange(n_frames)
    books = np.arange(16)
    whole = philox.uniform(seed, frames[:, None], books[None, :])
    chunked = np.concatenate([philox.uniform(seed, frames[i:i + chunk, None], books[None, :])
                              for i in range(0, n_frames, chunk)])
    order = np.random.default_rng(perm_seed).permutation(n_frames)
    shuffled = np.empty_like(whole)
    for f in order:
        shuffled[f] = [philox.uniform(seed, int(f), int(b)) for b in books]
    assert np.array_equal(whole, chunked)
    assert np.array_equal(whole, shuffled)
    assert np.all((whole >= 0) & (whole < 1))


@settings(max_examples=50, deadline=None)
@given(seed=u64, frame=u32, book=st.integers(0, 15))
def test_distinct_positions_give_distinct_draws(seed, frame, book):
    """Neighbouring positions and seeds are different counters/keys: their draws differ."""
    u = philox.uniform(seed, frame, book)
    assert u != philox.uniform(seed, frame, (book + 1) % 16)
    assert u != philox.uniform(seed, (frame + 1) % 2**32, book)
    assert u != philox.uniform((seed + 1) % 2**64, frame, book)


def test_uniform_is_uniform():
    """A coarse check of the 53-bit mapping: 16 bins of 64k draws, each within 5 sigma of 4096."""
    u = philox.uniform(123, np.arange(65536), 0)
    counts = np.histogram(u, bins=16, range=(0, 1))[0]
    expect = 65536 / 16
    sigma = np.sqrt(expect * (1 - 1 / 16))
    assert np.all(np.abs(counts - expect) < 5 * sigma), counts
