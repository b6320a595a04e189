"""Duplex streaming: text written in pieces while audio is pulled, from C, Python and the CLI (the
WebSocket is test_server*.py). Where a family's stream is exact (capabilities.stream.exact), commit
"auto" with no flush gives the audio of the whole text fed at once, bit for bit; the other policies
(sentence, manual, idle, flush, typing edits, utterance gaps, cancel) do what vox.h says."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import vox
from reference_helpers import run_cli
from vox.verify.tolerance import Row

ROOT = Path(__file__).resolve().parent.parent
TEXT = "Hello there. How are you today? I am fine, thank you."


@pytest.fixture(scope="module")
def kokoro(kokoro_tmod):
    with vox.Engine(kokoro_tmod("f32"), threads=2) as e:
        yield e


@pytest.fixture(scope="module")
def qwen(qwen3_tmod):
    with vox.Engine(qwen3_tmod("custom06", "bf16", "q8"), threads=2) as e:
        yield e


def _voice(eng):
    return eng.speaker_voice(eng.speakers[0]) if eng.family.name == "qwen3_tts" else eng.default_voice()


def _opts(eng):
    return {"max_new_tokens": 40} if eng.family.name == "qwen3_tts" else {}


def _words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + " " for p in parts[:-1]] + [parts[-1]]


@pytest.mark.parametrize("family", ["kokoro", "qwen"])
def test_capabilities_say_how_text_goes_in(family, request):
    eng = request.getfixturevalue(family)
    st = eng.capabilities["stream"]
    assert st["text_in"] == ("chunk" if family == "kokoro" else "token") and st["exact"] is True
    assert [o["name"] for o in eng.options()["stream_options"]] == ["commit", "idle_ms"]


@pytest.mark.parametrize("family", ["kokoro", "qwen"])
@pytest.mark.parametrize("how", ["words", "characters", "threads"])
def test_auto_commit_is_exact(family, how, request, record):
    """Words, single characters, or a writer thread racing the reader: the same audio as the whole text."""
    eng = request.getfixturevalue(family)
    v = _voice(eng)
    whole = eng.synthesize(TEXT, v, seed=5, **_opts(eng))
    pieces = list(TEXT) if how == "characters" else _words(TEXT)
    with eng.duplex(v, seed=5, **_opts(eng)) as d:
        if how == "threads":
            def writer():
                for p in pieces:
                    d.write(p)
                    time.sleep(0.002)
                d.end()

            t = threading.Thread(target=writer)
            t.start()
            got = d.final()
            t.join()
        else:
            for p in pieces:
                d.write(p)
            d.end()
            got = d.final()
    same = got.shape == whole.shape and np.array_equal(got, whole)
    record(Row("duplex.exact_auto", f"{eng.family.name}: {how} ({len(pieces)} pieces) vs the whole text, "
               f"{whole.size} samples", float(same), backend="cpu"))


def test_manual_commit_waits_for_flush(kokoro):
    v = _voice(kokoro)
    with kokoro.duplex(v, commit="manual") as d:
        d.write("Hello there. How are you? ")
        time.sleep(0.5)
        assert d._q.qsize() == 0, "manual commit spoke before the flush"
        d.flush()
        first = next(d.audio())
        assert first.samples.size > 0
        d.end()


def test_sentence_commit_and_idle_flush(kokoro):
    v = _voice(kokoro)
    with kokoro.duplex(v, commit="sentence", idle_ms=300) as d:
        d.write("An unfinished sentence without its stop")
        t0 = time.monotonic()
        c = next(d.audio())  # the idle flush speaks it
        assert c.samples.size > 0 and time.monotonic() - t0 >= 0.25
        d.end()


def test_typing_edits_the_unspoken_tail(kokoro):
    v = _voice(kokoro)
    want = kokoro.synthesize("Hello world. Goodbye now.", v, seed=2)
    with kokoro.duplex(v, commit="manual", seed=2) as d:
        d.set_text("Hello wrld")
        d.set_text("Hello world. Goodbye")
        d.set_text("Hello world. Goodbye now.")
        d.end()
        got = d.final()
    assert np.array_equal(got, want)


@pytest.mark.parametrize("policy", ["raise", "keep", "respeak"])
def test_editing_spoken_text(kokoro, policy):
    v = _voice(kokoro)
    with kokoro.duplex(v, on_conflict=policy) as d:
        d.set_text("First sentence. ")
        d.flush()
        it = d.audio()
        next(it)  # spoken
        if policy == "raise":
            with pytest.raises(vox.InvalidArgument, match="spoken"):
                d.set_text("Changed sentence. Second one.")
        else:
            d.set_text("Changed sentence. Second one.")
        d.end()
        rest = list(it)
    if policy == "respeak":
        assert d.utterances == 2 and rest
    else:
        assert d.utterances == 1


def test_utterance_gap_starts_a_new_utterance(kokoro):
    v = _voice(kokoro)
    with kokoro.duplex(v, utterance_gap_ms=300) as d:
        d.write("First sentence. ")
        time.sleep(1.2)
        d.write("Second one.")
        d.end()
        audio = d.final()
    assert d.utterances == 2 and audio.size > 0


def test_cancel_from_another_thread(kokoro):
    v = _voice(kokoro)
    d = kokoro.duplex(v)
    d.write(" ".join(["A long sentence that keeps the model busy for a while."] * 6))
    threading.Timer(0.3, d.cancel).start()
    list(d.audio())  # ends, without an error
    d.close()


@pytest.mark.parametrize("how", ["end", "cancel"])
def test_no_text_at_all_ends_the_audio(kokoro, how):
    """end() or cancel() before anything was written: audio() ends (empty) instead of waiting for a
    reader thread that never starts (a WebSocket client may connect and leave without typing)."""
    d = kokoro.duplex(_voice(kokoro), commit="manual")
    getattr(d, how)()
    out: list = []
    t = threading.Thread(target=lambda: out.extend(d.audio()), daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive() and out == []
    d.close()


def test_aaudio(kokoro):
    v = _voice(kokoro)

    async def go():
        d = kokoro.duplex(v, seed=1)
        d.write("Hello there.")
        d.end()
        out = [c.samples async for c in d.aaudio()]
        d.close()
        return np.concatenate(out)

    assert np.array_equal(asyncio.run(go()), kokoro.synthesize("Hello there.", v, seed=1))


def test_idle_aaudio_streams_leave_the_executor_free(kokoro):
    """Many duplex streams waiting for text in aaudio() do not hold the loop's default executor
    (which has a handful of threads): other run_in_executor work still runs at once."""
    v = _voice(kokoro)

    async def go():
        ds = [kokoro.duplex(v, seed=1) for _ in range(40)]
        readers = [asyncio.ensure_future(_drain(d)) for d in ds]
        await asyncio.sleep(0.2)
        try:
            got = await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(None, lambda: 42), 10)
        finally:
            for d in ds:
                d.cancel()   # ends the readers (and frees the executor if they held it)
        await asyncio.wait_for(asyncio.gather(*readers), 30)
        for d in ds:
            d.close()
        return got

    async def _drain(d):
        return [c async for c in d.aaudio()]

    assert asyncio.run(go()) == 42


def test_bad_settings(kokoro):
    v = _voice(kokoro)
    for kw, words in ((dict(commit="sometimes"), "commit must be one of"), (dict(idle_ms=-5), "idle_ms must be"),
                      (dict(on_conflict="merge"), "on_conflict must be one of"), (dict(speed=99), "speed must be")):
        with pytest.raises(vox.InvalidArgument, match=words):
            kokoro.duplex(v, **kw)
    d = kokoro.duplex(v)
    d.end()
    with pytest.raises(vox.InvalidArgument, match="ended"):
        d.write("more")
    d.close()


def test_from_c(kokoro):
    """examples/duplex.c: a writer thread feeds words while main() pulls; the same audio as the whole
    text (its seed 7)."""
    exe = ROOT / "build" / "ctest" / "duplex"
    if not exe.is_file():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(ROOT / "build" / "ctest"), "-DCMAKE_BUILD_TYPE=Release"],
                       check=True, capture_output=True)
        subprocess.run(["cmake", "--build", str(ROOT / "build" / "ctest"), "--target", "duplex", "-j2"], check=True,
                       capture_output=True)
    r = subprocess.run([str(exe), kokoro.model_path, TEXT], capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    got = np.frombuffer(r.stdout, "<f4")
    assert np.array_equal(got, kokoro.synthesize(TEXT, kokoro.default_voice(), seed=7))


def test_vox_live(kokoro, tmp_path):
    """vox live reads stdin as it arrives; piped whole or in pieces, the recording is that of vox say."""
    out = tmp_path / "live.wav"
    r = run_cli(["live", "--model", kokoro.model_path, "--seed", "3", "-o", str(out)], input_text=TEXT)
    assert r.returncode == 0, r.stderr
    say = tmp_path / "say.wav"
    r = run_cli(["say", TEXT, "--model", kokoro.model_path, "--seed", "3", "-o", str(say)])
    assert r.returncode == 0, r.stderr
    import soundfile as sf

    a, _ = sf.read(out, dtype="int16")
    b, _ = sf.read(say, dtype="int16")
    assert np.array_equal(a, b)
    r = run_cli(["live", "--model", kokoro.model_path, "--stream", "--commit", "manual"], input_text="Hi there.")
    assert r.returncode == 0 and len(r.stdout_bytes) > 4000, r.stderr


def test_word_timestamps_hold_their_words(kokoro, record):
    """Kokoro's durations give each word's span; whisper's own word timestamps on the same audio agree
    within kokoro.timestamps_vs_whisper, and the spans are in order and inside the audio."""
    from vox.verify.perceptual.asr import Transcriber

    v = _voice(kokoro)
    text = "The weather is lovely today. We should walk to the river after lunch."
    audio, words = kokoro.synthesize(text, v, seed=4, timestamps=True)
    assert [w["word"].lower() for w in words] == text.lower().replace(".", "").split()
    assert all(0 <= w["start"] < w["end"] <= audio.size / 24000 + 1e-3 for w in words)  # 4 decimals
    assert all(a["end"] <= b["start"] + 1e-6 for a, b in zip(words, words[1:]))
    heard = Transcriber(threads=2, cache=False).words(audio, 24000)
    inside, j = [], 0
    for h in heard:   # in order: a word may occur twice
        k = h["word"].lower().strip(".,")
        at = next((i for i in range(j, len(words)) if words[i]["word"].lower() == k), None)
        if at is not None:
            mid = (words[at]["start"] + words[at]["end"]) / 2
            inside.append(h["start"] - 0.1 <= mid <= h["end"] + 0.1)
            j = at + 1
    assert len(inside) >= len(words) - 2, (heard, words)
    record(Row("kokoro.timestamps_vs_whisper", f"{len(inside)} words of 2 sentences: our span's middle inside "
               "whisper's span of the word (+-0.1 s)", float(np.mean(inside)), backend="cpu"))
    # and every span holds speech: its RMS is far above the pause between the sentences
    rms = lambda a, b: float(np.sqrt(np.mean(audio[int(a * 24000):max(int(b * 24000), int(a * 24000) + 1)] ** 2)))  # noqa: E731
    gap = rms(words[4]["end"] + 0.05, words[5]["start"] - 0.05)
    assert all(rms(w["start"], w["end"]) > 10 * gap for w in words), (gap, [rms(w["start"], w["end"]) for w in words])
    # duplex chunks carry the same words, in stream time across utterances
    with kokoro.duplex(v, seed=4, timestamps=True) as d:
        d.write(text)
        d.end()
        got = [w for c in d.audio() for w in c.words or []]
    assert got == words
