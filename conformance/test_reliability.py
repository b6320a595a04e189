"""Bad input and careless use, by class (docs/reliability.md): every case gives a clear error (one line
from the CLI, an exception of the right class from the API) or a correct result, never a crash, a
traceback, silent wrong audio or a half-written file.

Classes here: lifetimes across threads, text validation, option ranges, output files and closed
streams, linear-time streaming normalization, non-finite weights and voices, odd recordings for
voice cloning; then the same classes on the F5-TTS family (its own section, on the tiny official
checkpoint of fixtures/f5_tiny.py). (Hostile files and bounded reads are test_reliability_inputs.py.)
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import vox
from reference_helpers import run_cli

LONG = " ".join(["The quick brown fox jumps over the lazy dog."] * 12)


@pytest.fixture(scope="module")
def kokoro(kokoro_tmod):
    return kokoro_tmod("f32")


@pytest.fixture(scope="module")
def eng(kokoro):
    with vox.Engine(kokoro, threads=2) as e:
        yield e


def _child(code: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter (a crash there is a failed check here, not a dead test run)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          timeout=timeout)


def _one_line_error(r: subprocess.CompletedProcess, words: str) -> None:
    assert r.returncode not in (0, -11, -6, 134, 139), (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert words in r.stderr, r.stderr


ACTIONS = {"session": "s.close()", "engine": "eng.close()", "cancel": "s.cancel()"}


def _close_while_pulling(setup: str, action: str, delay: str, *args: str, after: str = "") -> list[str]:
    """In a fresh interpreter: `setup` makes an engine `eng` and a session `s` with text fed and ended;
    a thread pulls it while the main thread sleeps `delay` seconds and then runs `action`. The pull
    must return; prints its last event ("cancelled", "end" or "error ...") then what `after` prints.
    Returns the printed lines (a crash or a hang fails the check)."""
    code = textwrap.dedent(setup) + textwrap.dedent(f"""
    out = []
    def pull():
        try:
            for c in s:
                out.append(c.samples.size)
            out.append("end")
        except vox.Cancelled:
            out.append("cancelled")
        except vox.VoxError as e:
            out.append("error " + str(e))
    t = threading.Thread(target=pull); t.start()
    time.sleep({float(delay)!r})
    {action}
    t.join(120)
    assert not t.is_alive(), "the pull did not return"
    print(out[-1])
    """) + textwrap.dedent(after)
    r = _child(code, *args)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    return r.stdout.strip().splitlines()


def _pull_ended(last: str) -> bool:
    return last in ("cancelled", "end") or last.startswith("error the session is closed")


# ------------------------------------------------------------------------------ lifetimes across threads
@pytest.mark.parametrize("what", ["session", "engine"])
def test_close_while_another_thread_pulls(kokoro, what):
    """Session.close() / Engine.close() from another thread while a thread is inside a pull: the pull
    ends with vox.Cancelled (or its chunk), the close returns, nothing crashes (it used to abort with
    free(): invalid size, or segfault)."""
    setup = f"""
    import sys, threading, time, vox
    eng = vox.Engine(sys.argv[1], threads=2)
    s = eng.session(eng.default_voice())
    s.feed({LONG!r}); s.end()
    """
    for _ in range(3):  # the close lands at different points of the pull
        lines = _close_while_pulling(setup, ACTIONS[what], "0.3", str(kokoro),
                                     after="eng.close()\n" if what == "session" else "")
        assert _pull_ended(lines[-1]), lines


@pytest.mark.parametrize("what", ["session", "engine", "cancel"])
def test_vulkan_close_while_another_thread_pulls(qwen3_tmod, what):
    """The same lifetimes on a Vulkan engine (Qwen3-TTS CustomVoice, tiny; lavapipe on CI): close,
    engine close or cancel from another thread while a pull waits on the GPU ends that pull with
    vox.Cancelled (or its chunk), and the engine refuses calls after its close, with no crash."""
    import vox

    if not vox.devices().get("gpus"):
        if os.environ.get("VOX_REQUIRE_VULKAN") == "1":
            pytest.fail("VOX_REQUIRE_VULKAN=1 but no Vulkan device")
        pytest.skip("no Vulkan device")
    setup = f"""
    import sys, threading, time, vox
    eng = vox.Engine(sys.argv[1], device="vulkan", threads=2)
    v = eng.speaker_voice("aiden")
    s = eng.session(v, seed=1)
    s.feed({LONG!r}); s.end()
    """
    # a closed engine refuses calls, with a voice or without one (then it says so, not that it needs one)
    after = """
    for call in (lambda: eng.synthesize("Hello.", v, seed=1), lambda: eng.synthesize("Hello.", seed=1)):
        try:
            call()
            print("used after close")
        except vox.VoxError as e:
            print("refused: " + str(e))
    """
    for delay in ("0", "0.5"):
        lines = _close_while_pulling(setup, ACTIONS[what], delay, str(qwen3_tmod("custom06", "bf16", "q8")),
                                     after=after if what == "engine" else "")
        if what == "engine":
            assert lines[-2:] == ["refused: the engine is closed"] * 2, lines
            lines = lines[:-2]
        assert _pull_ended(lines[-1]), lines


def test_calls_after_close_are_errors(eng):
    s = eng.session(eng.default_voice())
    s.close()
    s.close()  # twice is fine
    with pytest.raises(vox.VoxError, match="closed"):
        s.feed("Hello.")
    with vox.Engine(eng.model_path) as e2:
        v = e2.default_voice()
    with pytest.raises(vox.VoxError, match="closed"):
        e2.session(v)
    assert v.info["family"] == "kokoro"  # a voice outlives its engine


def test_a_piece_held_back_is_refused_too(eng):
    """One character is held back by the streaming NFC (a combining mark may follow it): fed to a closed
    or ended session, it used to be accepted without a word and then lost."""
    s = eng.session(eng.default_voice())
    s.feed("Hello")
    s.close()
    with pytest.raises(vox.VoxError, match="the session is closed"):
        s.feed("x")
    s = eng.session(eng.default_voice())
    s.feed("Hi.")
    s.end()
    with pytest.raises(vox.InvalidArgument, match="already ended"):
        s.feed("x")
    s.close()


# ------------------------------------------------------------------------------ text validation
@pytest.mark.parametrize("text,words", [
    ("hello\0world and more", "U+0000 at offset 5"),
    ("bell\x07", "U+0007 at offset 4"),
    ("esc\x1b[0m", "U+001B at offset 3"),
    ("c1\x85x", "U+0085 at offset 2"),
    ("lone \ud800 surrogate", "surrogate U+D800 at offset 5"),
])
def test_control_characters_are_refused_with_their_offset(eng, text, words):
    with pytest.raises(vox.InvalidArgument, match=words.replace("+", r"\+").replace("[", r"\[")):
        eng.synthesize(text)


def test_control_characters_from_the_cli(kokoro, tmp_path):
    r = subprocess.run([sys.executable, "-m", "vox.cli.main", "say", "--stdin", "--model", str(kokoro), "-o",
                        str(tmp_path / "a.wav")], input=b"hello\0world and more", capture_output=True)
    err = r.stderr.decode()
    assert r.returncode == 1 and "U+0000 at offset 5" in err and "Traceback" not in err, err
    assert not (tmp_path / "a.wav").exists()


def _with_metadata(src: Path, dst: Path, **meta: str) -> Path:
    """A copy of the .tvoice src with __metadata__ keys replaced (as a hostile file would hold them: the
    writer refuses such values), the tensors and their CRCs untouched."""
    import json
    import struct

    b = src.read_bytes()
    (n,) = struct.unpack_from("<Q", b)
    header = json.loads(b[8:8 + n])
    header["__metadata__"].update(meta)
    h = json.dumps(header).encode()
    dst.write_bytes(struct.pack("<Q", len(h)) + h + b[8 + n:])
    return dst


@pytest.mark.parametrize("key,value,words", [
    ("name", "bad\0name", "U+0000 at byte 3"),
    ("language", "en\x1b", "U+001B at byte 2"),
])
def test_voice_texts_with_control_characters_are_refused(eng, tmp_path, key, value, words):
    """A NUL in a voice's texts cut the text short in the C reader without a word (the same class as text
    after a NUL in `vox say`); both readers refuse it now, naming the byte, and the writer too."""
    from vox.formats import tvoice

    good = tmp_path / "good.tvoice"
    eng.default_voice().save(good)
    bad = _with_metadata(good, tmp_path / "bad.tvoice", **{key: value})
    with pytest.raises(vox.FormatError, match=f"{key}.* holds the control character {words}".replace("+", r"\+")):
        eng.load_voice(bad)
    with pytest.raises(vox.FormatError, match=words.replace("+", r"\+")):
        tvoice.read_voice(bad)
    import dataclasses

    v = dataclasses.replace(tvoice.read_voice(good), **{key: value})
    with pytest.raises(vox.FormatError, match=words.replace("+", r"\+")):
        tvoice.write_voice(tmp_path / "never.tvoice", v)
    assert not (tmp_path / "never.tvoice").exists()


@pytest.mark.parametrize("text", [". " * 50, "!!! ??? ...", "   \n\t  ", "\u2026 \u2014 \u201c\u201d"])
def test_nothing_to_speak_is_an_error(eng, text):
    """Punctuation or white space alone used to make 30 s of noise; now it is "nothing to speak"."""
    s = eng.session(eng.default_voice())
    s.feed(text)
    s.end()
    with pytest.raises(vox.InvalidArgument, match="nothing to speak"):
        list(s)
    s.close()


def test_phoneme_input_refuses_unknown_symbols(eng):
    with pytest.raises(vox.InvalidArgument, match="not in the Kokoro vocabulary"):
        eng.synthesize("hɛlˈoʊ wˈɜɹld 42", phonemes=True)
    assert eng.synthesize("həlˈO.", phonemes=True).size > 0


@pytest.mark.parametrize("sym, shown", [("\x7f", "U+007F"), ("\x85", "U+0085"), ("\u2028", "U+2028"), ("\u00a0", "U+00A0"),
                                        ("9", '"9" (U+0039)')])
def test_unknown_symbol_is_named_printably(eng, sym, shown):
    """A symbol outside the vocabulary is named by its code point, and shown itself only when it prints:
    an error message stays one printable line (a DEL in an override's phonemes used to go into the
    message as it was; found by fuzz_kokoro_text). Phoneme input refuses control characters before
    (as all text), so only a printable symbol reaches its vocabulary check."""
    calls = [lambda: eng.synthesize("Tomato.", pronunciations={"tomato": "t" + sym})]
    if sym.isprintable():
        calls.append(lambda: eng.synthesize("t" + sym, phonemes=True))
    for call in calls:
        with pytest.raises(vox.InvalidArgument, match="not in the Kokoro vocabulary") as e:
            call()
        assert f"symbol {shown} " in str(e.value) and str(e.value).isprintable(), str(e.value)


@pytest.mark.parametrize("lang", ["klingon", "english-ish", ""])
def test_unknown_language(eng, lang):
    with pytest.raises(vox.InvalidArgument, match="unknown language"):
        eng.synthesize("Hello.", language=lang or "x")


def test_seed_range(eng):
    v = eng.default_voice()
    a = eng.synthesize("Hi.", v, seed=2**64 - 1)
    assert a.size
    for bad in (2**64, -1):
        with pytest.raises(vox.InvalidArgument, match="seed must be in"):
            eng.synthesize("Hi.", v, seed=bad)
    r = run_cli(["say", "Hi.", "--seed", str(2**64), "-o", "/tmp/never.wav"])
    assert r.returncode == 2 and "--seed must be in" in r.stderr and "Traceback" not in r.stderr, r.stderr


# ------------------------------------------------------------------------------ option ranges
@pytest.mark.parametrize("kw,words", [
    (dict(speed=9.0), "speed must be a number in [0.25, 4]"),
    (dict(speed=float("nan")), "speed must be a number"),
    (dict(pause_ms=2**40), "pause_ms must be an integer in [0, 10000]"),
    (dict(pause_ms=-1), "pause_ms must be an integer in [0, 10000]"),
    (dict(phonemes="yes"), "phonemes must be true or false"),
    (dict(pronunciations="hello"), "pronunciations must be a mapping"),
])
def test_option_ranges_in_the_api(eng, kw, words):
    with pytest.raises(vox.InvalidArgument, match=words.replace("[", r"\[").replace("]", r"\]")):
        eng.synthesize("Hello.", **kw)


def test_unknown_options_name_the_known_ones(eng):
    with pytest.raises(TypeError, match="unknown synthesis option 'temperature' for a Kokoro model; known: speed"):
        eng.synthesize("Hello.", temperature=0.5)


def test_the_core_checks_options_too(eng):
    """JSON that bypasses the dataclass (a C caller) gets the same refusals from the core's table."""
    from vox._native import ffi, lib

    v = eng.default_voice()
    for opts, words in (('{"speed": 9}', "speed must be a number in [0.25, 4]"),
                        ('{"speed": "fast"}', "speed must be a number"),
                        ('{"pause_ms": 1e30}', "pause_ms must be an integer"),
                        ('{"nope": 1}', "unknown option \"nope\""),
                        ('[1, 2]', "must be a JSON object"),
                        ('{"speed": 1', "not valid JSON")):
        p = ffi.new("vox_synth_params *", lib.vox_synth_default_params(eng._h, v._h))
        keep = ffi.new("char[]", opts.encode())
        p.options = keep
        out = ffi.new("vox_session **")
        st = lib.vox_session_create(eng._h, v._h, p, out)
        assert st == lib.VOX_ERR_INVALID_ARGUMENT, opts
        assert words in ffi.string(lib.vox_last_error()).decode(), (opts, ffi.string(lib.vox_last_error()))


@pytest.mark.parametrize("args,words", [
    (["--pause-ms", "99999999999"], "pause_ms must be an integer in [0, 10000]"),
    (["--threads", "99999999999"], "--threads must be in [0, 1024]"),
    (["--nice", "99999999999"], "--nice must be in [-20, 19]"),
    (["--speed", "0"], "speed must be a number in [0.25, 4]"),
    (["--temperature", "0.5"], "--temperature: not for Kokoro models"),
])
def test_option_ranges_in_the_cli(kokoro, tmp_path, args, words):
    r = run_cli(["say", "Hello.", "--model", str(kokoro), "-o", str(tmp_path / "o.wav"), *args])
    assert r.returncode in (1, 2) and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "o.wav").exists()


def test_engine_parameters_in_the_api(kokoro):
    for kw, words in ((dict(threads=2**40), "threads must be in [0, 1024]"), (dict(threads=-1), "threads must be in"),
                      (dict(resources=vox.Resources(nice=99)), "nice must be in [-20, 19]"),
                      (dict(resources=vox.Resources(max_sessions=2**31)), "max_sessions must be in")):
        with pytest.raises(vox.InvalidArgument, match=words.replace("[", r"\[").replace("]", r"\]")):
            vox.Engine(kokoro, **kw)


def test_session_limit_is_its_own_error(kokoro):
    with vox.Engine(kokoro, resources=vox.Resources(max_sessions=1)) as e:
        v = e.default_voice()
        s = e.session(v)
        with pytest.raises(vox.SessionLimit, match="max_sessions"):
            e.session(v)
        s.close()
        e.session(v).close()


# ------------------------------------------------------------------------------ output files
def test_output_rules(kokoro, tmp_path):
    base = ["say", "Hi.", "--model", str(kokoro), "-q"]
    # a device or a FIFO is never replaced, --force or not (as root, -o /dev/null --force used to delete it)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in ("/dev/null", str(fifo)):
        r = run_cli([*base, "-o", target, "--force"])
        assert r.returncode == 1 and "not a regular file" in r.stderr, r.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    # "-" is standard output (it used to be a file named "-")
    r = run_cli([*base, "-o", "-"])
    assert r.returncode == 0 and r.stdout_bytes[:4] == b"RIFF" and not Path("-").exists(), r.stderr
    # existing files need --force, and keep their permissions
    out = tmp_path / "a.wav"
    out.write_bytes(b"old")
    os.chmod(out, 0o640)
    r = run_cli([*base, "-o", str(out)])
    assert r.returncode == 1 and "--force" in r.stderr and out.read_bytes() == b"old"
    r = run_cli([*base, "-o", str(out), "--force"])
    assert r.returncode == 0 and out.read_bytes()[:4] == b"RIFF" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".vox-")] == []


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_follow_the_umask(kokoro, tmp_path, umask, mode):
    out = tmp_path / "u.wav"
    r = subprocess.run(["sh", "-c", f'umask {umask:03o} && exec "$0" -m vox.cli.main say Hi. -q --model "$1" -o "$2"',
                        sys.executable, str(kokoro), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == mode


def test_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    """A write that fails for lack of space (simulated: libsndfile's error for ENOSPC) is one line, and no
    temporary file is left."""
    import errno

    import soundfile as sf

    from vox.cli import outputs

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sf, "write", full)
    out = tmp_path / "x.wav"
    with pytest.raises(OSError, match="no space left") as e:
        outputs.write_wav(str(out), np.zeros(100, np.float32), 24000)
    assert e.value.errno == errno.ENOSPC and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["-o -", "--stream"])
def test_full_standard_output_is_one_line(kokoro, flag):
    """Standard output redirected to a full disk (/dev/full): one line that says so, not a bare errno
    ("[Errno 28] ..."), and a non-zero exit."""
    r = subprocess.run(["sh", "-c", f'"$0" -m vox.cli.main say Hi. -q --model "$1" {flag} > /dev/full', sys.executable,
                        str(kokoro)], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    _one_line_error(r, "writing to standard output: no space left on the device")
    assert "Errno" not in r.stderr


@pytest.mark.parametrize("shell,words", [
    ('"$0" -m vox.cli.main say Hi. -q --model "$1" --stream >&-', "standard output is closed"),
    ('"$0" -m vox.cli.main say --stdin -q --model "$1" -o "$2" <&-', "standard input is closed"),
])
def test_closed_streams(kokoro, tmp_path, shell, words):
    r = subprocess.run(["sh", "-c", shell, sys.executable, str(kokoro), str(tmp_path / "s.wav")], capture_output=True,
                       text=True)
    _one_line_error(r, words)


def test_closed_stderr_still_writes_the_wav(kokoro, tmp_path):
    out = tmp_path / "e.wav"
    r = subprocess.run(["sh", "-c", '"$0" -m vox.cli.main say Hi. --model "$1" -o "$2" 2>&-', sys.executable,
                        str(kokoro), str(out)], capture_output=True)
    assert r.returncode == 0 and out.read_bytes()[:4] == b"RIFF"


# ------------------------------------------------------------------------------ streaming normalization
def test_feeding_combining_marks_is_linear(eng, monkeypatch):
    """16k one-character feeds of U+0301 used to take 20 s (the held-back text was rescanned and copied on
    every feed); the work per feed is now constant: count the character classifications."""
    import vox.engine as ve

    calls = [0]
    real = ve.unicodedata.combining

    def combining(ch):
        calls[0] += 1
        return real(ch)

    monkeypatch.setattr(ve.unicodedata, "combining", combining)
    stream = ve._NFCStream()
    pieces = [stream.push("a")] + [stream.push("\u0301") for _ in range(16000)] + [stream.flush()]
    assert calls[0] <= 2 * 16001
    text = "".join(pieces)
    import unicodedata

    assert text == unicodedata.normalize("NFC", "a" + "\u0301" * 16000)
    # and through a session: the core receives the composed text
    s = eng.session(eng.default_voice())
    for _ in range(200):
        s.feed("\u0301")
    s.feed("Hello.")
    s.close()


# ------------------------------------------------------------------------------ non-finite weights and voices
def test_corrupt_weights_are_an_error_not_silence(kokoro, tmp_path):
    """A model whose weights were overwritten with NaN used to give 40 ms of silence and exit 0."""
    from vox.formats.tmod import TmodFile

    bad = tmp_path / "nan.tmod"
    data = bytearray(kokoro.read_bytes())
    with TmodFile(kokoro) as f:
        e = f.tensors["decoder.generator.conv_post.weight"]
        start = f.data_offset + e.offset
    data[start:start + e.nbytes] = np.full(e.nbytes // 4, np.nan, np.float32).tobytes()
    bad.write_bytes(bytes(data))
    with vox.Engine(bad, threads=2) as e2:
        with pytest.raises(vox.FormatError, match="non-finite audio.*vox inspect --check"):
            e2.synthesize("Hello there.")
    r = run_cli(["inspect", "--check", str(bad)])
    assert r.returncode == 1 and "corrupt" in r.stderr, r.stderr


@pytest.mark.parametrize("value", [3e38, -1e6])
def test_absurd_style_values_are_refused(eng, tmp_path, value):
    """A voice of finite 3e38 values passed validation and then ran into NaN durations (undefined
    behaviour, reported as out of memory); now the voice is refused."""
    from vox.families.kokoro.convert import style_voice
    from vox.formats import tvoice

    p = tmp_path / "huge.tvoice"
    tvoice.write_voice(p, style_voice(np.full((510, 256), value, np.float32), "huge"))
    with pytest.raises(vox.FormatError, match="style pack holds"):
        eng.synthesize("Hello.", eng.load_voice(p))


# ------------------------------------------------------------------------------ odd recordings (Qwen3 cloning)
def _wav(path: Path, x: np.ndarray, sr: int, subtype: str = "PCM_16") -> Path:
    import soundfile as sf

    sf.write(path, x, sr, subtype=subtype)
    return path


def test_odd_recordings_for_cloning(qwen3_tmod, ref_audio, tmp_path):
    wav, sr, text = ref_audio("ref_en_24k.wav")
    with vox.Engine(qwen3_tmod("base06"), threads=1) as e:
        good = {
            "8 kHz": _wav(tmp_path / "8k.wav", wav[::3], 8000),
            "192 kHz": _wav(tmp_path / "192k.wav", np.repeat(wav, 8), 192000),
            "stereo": _wav(tmp_path / "st.wav", np.stack([wav, wav * 0.5], 1), sr),
            "8-bit": _wav(tmp_path / "u8.wav", wav, sr, "PCM_U8"),
        }
        for what, p in good.items():
            v = e.clone_voice(p, text, x_vector_only=False)
            assert v.array("ref_codes").shape[1] == 16, what
        bad_nan = wav.copy()
        bad_nan[100] = np.nan
        header = bytearray(_wav(tmp_path / "long.wav", wav[:2400], sr).read_bytes())
        header[40:44] = (10 * 3600 * sr * 2).to_bytes(4, "little")  # the data chunk claims 10 hours
        (tmp_path / "long.wav").write_bytes(bytes(header))
        (tmp_path / "text.wav").write_text("not audio at all")
        cases = [
            (_wav(tmp_path / "empty.wav", np.zeros(0, np.float32), sr), vox.FormatError, "empty"),
            (_wav(tmp_path / "nan.wav", bad_nan, sr, "FLOAT"), vox.FormatError, "sample 100 is not finite"),
            (tmp_path / "text.wav", vox.FormatError, "not a recording vox reads"),
            ((np.zeros((10, 100), np.float32), sr), vox.InvalidArgument, "channels"),
            ((wav, 500), vox.InvalidArgument, "sample rate 500 Hz"),
            ((np.zeros(601 * 1000, np.float32), 1000), vox.LimitExceeded, "too long for a voice"),
        ]
        for src, cls, words in cases:
            with pytest.raises(cls, match=words):
                e.clone_voice(src, text)
        # a header that promises more than the file holds reads what is there (libsndfile), not 10 hours
        v = e.clone_voice(tmp_path / "long.wav", None, x_vector_only=True)
        assert v.array("source_wav").size <= 2400


def test_nothing_to_speak_for_qwen3(qwen3_tmod, ref_audio):
    """Punctuation alone made 8 s of talk from Qwen3-TTS (the model is asked to say something); every
    family now gives the same error for a text without a letter or a digit."""
    wav, sr, _ = ref_audio("ref_en_24k.wav")
    with vox.Engine(qwen3_tmod("base06"), threads=1) as e:
        v = e.clone_voice((wav, sr), None, x_vector_only=True)
        for text in (". . . .", "!!! ???", "\u2014 \u2026"):
            with pytest.raises(vox.InvalidArgument, match="nothing to speak: the text has no words"):
                e.synthesize(text, v, max_new_tokens=40)
        assert e.synthesize("Hi.", v, max_new_tokens=8).size > 0


# ==================================================================================================
# F5-TTS: the same classes on the flow-matching family (the tiny official v1 checkpoint of
# fixtures/f5_tiny.py, converted once per module): odd recordings for cloning, option ranges, nothing
# to speak, close and cancel from another thread during a pull, hostile .tvoice files.
# ==================================================================================================
F5_TEXT = "Some call me nature, others call me mother nature."


@pytest.fixture(scope="module")
def f5_model(tmp_path_factory):
    from fixtures import f5_tiny
    from vox.families.f5 import convert as f5
    from vox.families.f5 import sources as f5_sources

    fx = f5_tiny.fixture("v1")
    out = tmp_path_factory.mktemp("f5") / "f5-tiny.tmod"
    f5.convert(fx.safetensors, fx.vocab, fx.vocos, out, text_data=f5_sources.cached_frontend(fx.vocab.read_bytes()))
    return out


@pytest.fixture(scope="module")
def f5(f5_model):
    with vox.Engine(f5_model, threads=2) as e:
        yield e


@pytest.fixture(scope="module")
def f5_ref(ref_audio):
    wav, sr, _ = ref_audio("ref_en_24k.wav")
    return wav[: int(2.5 * sr)], sr


@pytest.fixture(scope="module")
def f5_voice(f5, f5_ref, tmp_path_factory):
    p = tmp_path_factory.mktemp("f5v") / "ref.tvoice"
    f5.clone_voice(f5_ref, F5_TEXT).save(p)
    return p


def test_f5_odd_recordings(f5, f5_ref, tmp_path):
    wav, sr = f5_ref
    for what, src in {"192 kHz": (np.repeat(wav, 8), 192000), "stereo": (np.stack([wav, wav * 0.5], 1), sr),
                      "8-bit": _wav(tmp_path / "u8.wav", wav, sr, "PCM_U8"), "float64": (wav.astype(np.float64), sr),
                      "40 s": (np.tile(wav, 16), sr)}.items():
        mel = f5.clone_voice(src, F5_TEXT).array("ref_mel")
        assert mel.shape[1] == 100 and 2 <= mel.shape[0] <= 12 * 24000 // 256 + 10 and np.isfinite(mel).all(), what
    bad = wav.copy()
    bad[5] = np.nan
    (tmp_path / "text.wav").write_text("not audio at all")
    cases = [
        ((np.zeros(0, np.float32), sr), vox.InvalidArgument, "with samples, not shape \\[0\\]"),
        ((np.zeros(48000, np.float32), sr), vox.InvalidArgument, "the reference recording is silent"),
        ((wav[:240], sr), vox.InvalidArgument, "the reference recording is silent"),
        ((bad, sr), vox.InvalidArgument, "sample 5 is not finite"),
        ((wav * 1e30, sr), vox.InvalidArgument, "far out of range"),
        ((wav[::3], 8000), vox.InvalidArgument, "8000 Hz is below 11025 Hz"),
        ((np.repeat(wav, 2), 10_000_000), vox.InvalidArgument, "sample rate 10000000 Hz is not supported"),
        ((np.stack([wav, wav], 0), sr), vox.InvalidArgument, "60000 channels"),
        (tmp_path / "text.wav", vox.FormatError, "not a recording vox reads"),
        ("/dev/zero", vox.FormatError, "not a regular file"),
    ]
    for src, cls, words in cases:
        with pytest.raises(cls, match=words):
            f5.clone_voice(src, F5_TEXT)
    for text, words in (("", "needs the transcript"), ("a\0b", "U\\+0000 at offset 1"), ("   ", "needs the transcript|blank")):
        with pytest.raises(vox.InvalidArgument, match=words):
            f5.clone_voice(f5_ref, text)


def test_f5_option_ranges(f5, f5_voice):
    v = f5.load_voice(f5_voice)
    for kw, cls, words in ((dict(nfe_step=0), vox.InvalidArgument, "nfe_step must be an integer in [1, 256], not 0"),
                           (dict(max_chars=2**40), vox.InvalidArgument, "max_chars must be an integer in [0, 1000000]"),
                           (dict(target_rms=0), vox.InvalidArgument, "target_rms must be a number in (0, 1], not 0"),
                           (dict(speed=float("inf")), vox.InvalidArgument, "speed must be a number in [0.1, 10]"),
                           (dict(cfg_strength=-1), vox.InvalidArgument, "cfg_strength must be a number in [0, 20]"),
                           (dict(fix_duration=600, nfe_step=1), vox.LimitExceeded, "longer than the 8192 frames")):
        with pytest.raises(cls, match=re.escape(words)):
            f5.synthesize("Hello there.", v, **kw)
    # the ends of the ranges are usable, and give finite audio
    for kw in (dict(nfe_step=1, cfg_strength=20, sway_sampling_coef=1), dict(nfe_step=2, speed=10, target_rms=1),
               dict(nfe_step=2, max_chars=1, cross_fade_duration=2), dict(nfe_step=2, fix_duration=1)):
        a = f5.synthesize("Hello there, friend.", v, **kw)
        assert a.size > 0 and np.isfinite(a).all(), kw


def test_f5_nothing_to_speak(f5, f5_voice):
    """Punctuation alone made a second of sound from F5-TTS; it is "nothing to speak", as for every family."""
    v = f5.load_voice(f5_voice)
    for text in (". . . .", "!!! ???", "\u2026"):
        with pytest.raises(vox.InvalidArgument, match="nothing to speak"):
            f5.synthesize(text, v, nfe_step=2)


@pytest.mark.parametrize("what", ["session", "engine", "cancel"])
def test_f5_close_while_another_thread_pulls(f5_model, f5_voice, what):
    setup = f"""
    import sys, threading, time, vox
    eng = vox.Engine(sys.argv[1], threads=2)
    s = eng.session(eng.load_voice(sys.argv[2]), nfe_step=8, max_chars=40)
    s.feed({LONG!r}); s.end()
    """
    for delay in ("0", "0.3"):
        lines = _close_while_pulling(setup, ACTIONS[what], delay, str(f5_model), str(f5_voice))
        assert _pull_ended(lines[-1]), lines


def test_engine_and_session_left_to_the_cycle_collector(f5_model, f5_voice):
    """An engine and its session that become cyclic garbage together (as at interpreter exit) are
    finalized in any order; with the engine first, its free freed the session and the session's own
    finalizer then freed it again (an abort or a hang at exit after a cancelled pull, seen on CI)."""
    code = """
    import gc, sys, vox
    for i in range(6):
        eng = vox.Engine(sys.argv[1], threads=1)
        s = eng.session(eng.load_voice(sys.argv[2]), nfe_step=2)
        s.feed("Hello there."); s.end()
        s._cycle = s                       # the session in a cycle, the engine reachable only from it
        if i % 2:
            eng._cycle = (eng, s)
        del s, eng
        gc.collect()
    print("ok")
    """
    r = _child(code, str(f5_model), str(f5_voice), timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])


def test_f5_hostile_voices(f5, f5_voice, tmp_path):
    """Values a cloned voice never holds are refused when the voice is used, not turned into silence,
    noise or undefined behaviour; a text with a NUL is refused when the file is read (it cut the
    transcript short: the output was four times too long)."""
    import dataclasses

    from vox.formats import tvoice

    g = tvoice.read_voice(f5_voice)
    mel = g.arrays["ref_mel"]

    def voice(arrays=None, drop=(), **kw):
        a = {**g.arrays, **(arrays or {})}
        for d in drop:
            a.pop(d)
        if "source_wav" in drop:
            kw["source_sample_rate"] = None
        p = tmp_path / "bad.tvoice"
        tvoice.write_voice(p, dataclasses.replace(g, arrays=a, **kw))
        return f5.load_voice(p)

    cases = [
        (dict(arrays=dict(ref_rms=np.full(1, 1e-30, np.float32))), "loudness \\(1e-30\\)"),
        (dict(arrays=dict(ref_rms=np.zeros(1, np.float32))), "loudness \\(0\\)"),
        (dict(arrays=dict(ref_rms=np.full(1, 1e30, np.float32))), "loudness \\(1e\\+30\\)"),
        (dict(arrays=dict(ref_length=np.array([0, 24000], np.int64))), "reference length \\(0 samples"),
        (dict(arrays=dict(ref_length=np.array([60958, 1], np.int64))), "at 1 Hz\\) is impossible"),
        (dict(arrays=dict(ref_mel=np.full_like(mel, 3e38))), "log-mel values are a few tens at most"),
        (dict(arrays=dict(ref_mel=mel[:1].copy())), "the voice's mel has 1 frames"),
        (dict(arrays=dict(ref_mel=mel[:, :80].copy()), drop=("source_wav",)), "has 80 bands, this model 100"),
    ]
    for kw, words in cases:
        with pytest.raises(vox.FormatError, match=words):
            f5.synthesize("Hello there.", voice(**kw), nfe_step=2)
    for bad in ("Some call me\0 nature.", "Some call me\x1b nature."):
        p = _with_metadata(f5_voice, tmp_path / "nul.tvoice", ref_text=bad)
        with pytest.raises(vox.FormatError, match="ref_text.* holds the control character U\\+00(00|1B) at byte 12"):
            f5.load_voice(p)
    # a plausible quiet voice still speaks
    a = f5.synthesize("Hello there.", voice(arrays=dict(ref_rms=np.full(1, 1e-3, np.float32))), nfe_step=2)
    assert a.size and np.isfinite(a).all()
