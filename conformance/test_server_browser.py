"""The page at / in a real headless Chromium (Debian's chromium, driven by playwright), against a real
`vox serve`: clicking through it speaks text, types live over the WebSocket and creates voices from
the (fake) microphone and from a file; and what the page received and played is the PCM the server
sends for that text, voice and seed.

"Played" is checked on what the page's audio graph really rendered: every chunk passes a pass-through
AudioWorklet in front of the speakers, which records each rendered block with its frame on the audio
clock (window.voxPage); the samples rendered at each chunk's place must be the chunk's samples.
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import sync_playwright

import vox
from server_harness import ROOT, VoxServer, s16, tracebacks

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
        "--autoplay-policy=no-user-gesture-required"]
TEXT = "Hello there. This is vox."
SEED = 5
REF_TEXT = "The quick brown fox jumps over the lazy dog, while seven kind rabbits watch quietly."


@pytest.fixture(scope="module")
def models(kokoro_tmod, qwen3_tmod):
    return {"kokoro": kokoro_tmod("f32"), "base": qwen3_tmod("base06")}


@pytest.fixture(scope="module")
def voices_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("browser") / "voices"


@pytest.fixture(scope="module")
def server(models, voices_dir):
    args = [a for n, p in models.items() for a in ("--model", f"{n}={p}")] + ["--voices", str(voices_dir)]
    with VoxServer(args) as srv:
        yield srv
        assert not tracebacks(srv.log()), srv.log()


@pytest.fixture(scope="module")
def kokoro(models):
    with vox.Engine(models["kokoro"]) as e:
        yield e


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context()
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(server.url + "/")
    pg.wait_for_function("window.voxPage && window.voxPage.ready", timeout=60_000)
    yield pg
    ctx.close()
    assert not errors, errors


def _pcm(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), "<i2")


def _played(pg, what: str) -> tuple[np.ndarray, list[dict]]:
    """(the PCM the page received, its chunks), after checking that the audio graph rendered each
    chunk's samples exactly at the chunk's place on the audio clock."""
    pcm = _pcm(pg.evaluate(f"voxPage.{what}.pcmBase64()"))
    chunks = pg.evaluate(f"voxPage.{what}.chunks")
    at = 0
    for i, c in enumerate(chunks):
        rendered = _pcm(pg.evaluate(f"voxPage.{what}.renderedBase64({i})"))
        assert c["ended"] and rendered.size == c["samples"]
        assert np.array_equal(rendered, pcm[at:at + c["samples"]]), (what, i)
        if i:
            assert c["startFrame"] >= chunks[i - 1]["startFrame"] + chunks[i - 1]["samples"]   # in order, no overlap
        at += c["samples"]
    assert at == pcm.size
    return pcm, chunks


def test_speak_plays_what_the_server_sent(page, kokoro):
    page.select_option("#model", "kokoro")
    page.wait_for_function("[...document.querySelectorAll('#voice option')].some(o => o.value === 'jm_kumo')")
    page.select_option("#voice", "jm_kumo")
    page.fill("#seed", str(SEED))
    page.fill("#text", TEXT)
    page.click("#speak")
    page.wait_for_function("voxPage.speech && (voxPage.speech.played || voxPage.speech.error)", timeout=120_000)
    assert page.evaluate("voxPage.speech.error") is None
    pcm, chunks = _played(page, "speech")
    want = s16(kokoro.synthesize(TEXT, kokoro.speaker_voice("jm_kumo"), seed=SEED))
    assert np.array_equal(pcm, want)
    assert len(chunks) == 2          # one per sentence: played as they came
    assert page.evaluate("voxPage.speech.events") == ["speech.audio.delta"] * 2 + ["speech.audio.done"]
    assert page.locator("#download").is_visible()
    # the words, from the timestamps, and each was highlighted while it was spoken
    _, words = kokoro.synthesize(TEXT, kokoro.speaker_voice("jm_kumo"), seed=SEED, timestamps=True)
    got = page.evaluate("voxPage.speech.words")
    assert [w["word"] for w in got] == [w["word"] for w in words] == ["Hello", "there", "This", "is", "vox"]
    assert all(abs(a["start"] - b["start"]) < 1e-3 and abs(a["end"] - b["end"]) < 1e-3 for a, b in zip(got, words))
    assert page.evaluate("voxPage.speech.lit.length === voxPage.speech.words.length && "
                         "voxPage.speech.lit.every(Boolean)")
    assert page.locator("#words span").count() == len(words)


def test_live_typing_plays_the_typed_text(page, kokoro):
    page.select_option("#model", "kokoro")
    page.wait_for_function("[...document.querySelectorAll('#voice option')].some(o => o.value === 'jm_kumo')")
    page.select_option("#voice", "jm_kumo")
    page.fill("#seed", str(SEED))
    page.select_option("#commit", "auto")
    page.click("#live-start")
    page.wait_for_function("voxPage.live && voxPage.live.status === 'started'", timeout=60_000)
    page.locator("#live").press_sequentially(TEXT, delay=15)          # key by key: a set_text per keystroke
    page.click("#live-end")
    page.wait_for_function("voxPage.live.played || voxPage.live.error", timeout=120_000)
    assert page.evaluate("voxPage.live.error") is None
    pcm, _ = _played(page, "live")
    # Kokoro's stream is exact: commit auto without a flush or a pause speaks the text as a whole
    assert np.array_equal(pcm, s16(kokoro.synthesize(TEXT, kokoro.speaker_voice("jm_kumo"), seed=SEED)))
    assert page.evaluate("voxPage.live.events")[0] == "started"
    assert page.evaluate("voxPage.live.events")[-1] == "done"


def test_voices_from_the_microphone_and_a_file(page, voices_dir, models):
    page.select_option("#model", "base")
    page.click("#rec-start")
    page.wait_for_timeout(1500)                                     # the fake microphone's tone
    page.click("#rec-stop")
    page.wait_for_function("voxPage.recording !== null", timeout=30_000)
    rate = page.evaluate("voxPage.recording.sampleRate")
    recorded = _pcm(page.evaluate("voxPage.recording.pcmBase64()"))
    assert recorded.size > rate and np.abs(recorded).max() > 1000   # a second or more of the fake tone
    page.fill("#new-name", "from_mic")
    page.fill("#new-text", REF_TEXT)
    page.click("#create")
    page.wait_for_function("voxPage.created && voxPage.created.id === 'from_mic'", timeout=120_000)
    assert page.evaluate("voxPage.created.model") == "base"
    with vox.Engine(models["base"]) as eng:
        v = eng.load_voice(voices_dir / "from_mic.tvoice")
        assert v.mode == "icl" and v.texts["ref_text"] == REF_TEXT
        # what the page recorded is what was cloned (16-bit WAV: samples / 32768)
        assert np.array_equal(v.array("source_wav"), recorded.astype(np.float32) / 32768)
    # from a file, then both are listed, and the page deletes one
    page.evaluate("voxPage.recording = null")
    page.set_input_files("#new-file", str(ROOT / "fixtures" / "audio" / "ref_en_16k.wav"))
    page.fill("#new-name", "from_file")
    page.click("#create")
    page.wait_for_function("voxPage.created && voxPage.created.id === 'from_file'", timeout=120_000)
    page.wait_for_function("document.querySelectorAll('#stored li').length === 2")
    assert sorted(p.name for p in voices_dir.iterdir()) == ["from_file.tvoice", "from_mic.tvoice"]
    page.locator("#stored li", has_text="from_mic").locator("button").click()
    page.wait_for_function("document.querySelectorAll('#stored li').length === 1")
    assert sorted(p.name for p in voices_dir.iterdir()) == ["from_file.tvoice"]
    # and an error reaches the page as the server's message
    page.fill("#new-name", "../bad")
    page.click("#create")
    page.wait_for_function("voxPage.created && voxPage.created.error", timeout=60_000)
    assert "invalid voice name" in page.evaluate("voxPage.created.error")
    assert page.evaluate("voxPage.created.status") == 400
