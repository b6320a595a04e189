"""Prompt building of Qwen3-TTS-12Hz: the talker's prefill embeddings and the text fed during generation.

Mirrors, for one batch item, the prompt part of Qwen3TTSForConditionalGeneration.generate (and
generate_icl_prompt) in qwen_tts/core/models/modeling_qwen3_tts.py, plus the input handling of the
wrapper methods Qwen3TTSModel.generate_voice_clone / generate_custom_voice / generate_voice_design in
qwen_tts/inference/qwen3_tts_model.py (text templates, language and speaker checks, the 0b6
CustomVoice ignoring instructions, the defaults of non_streaming_mode).

The prompt is a sum of two streams per position, a text stream (text_projection(text_embedding(id)))
and a codec stream (codec_embedding(id)):

    [instruction]                     text only: <|im_start|>user\\n{instruct}<|im_end|>\\n (if any)
    <|im_start|> assistant \\n        text only (the first 3 ids of the assistant template)
    tts_pad ... tts_pad, tts_bos     + codec: think/nothink, think_bos, [language], think_eos,
                                       [speaker], pad     (the codec bos is held back)
    then, by mode:
      streaming text (non_streaming_mode=False):
        first text token + codec bos; the other text tokens and tts_eos are added to the inputs of
        generation steps 0, 1, ... ("trailing text"), tts_pad after them
      non-streaming text (non_streaming_mode=True):
        every text token and tts_eos + codec pad each, then tts_pad + codec bos; trailing = tts_pad
      ICL voice clone (Base with reference codes):
        text = ref text ids + text ids, then tts_eos; codec = bos, then each reference frame's sum of
        its 16 code embeddings. Non-streaming: text + codec pad, then codec + tts_pad; trailing =
        tts_pad. Streaming: text and codec summed position by position over the codec length; text
        left over becomes the trailing text, a shorter text is padded with tts_pad.

"language auto" takes the nothink path (no language id); a CustomVoice dialect speaker replaces
chinese/auto by its dialect. The speaker row is the CustomVoice speaker's codec embedding row or the
Base voice's x-vector.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import tokenizer as tk


@dataclass
class Prompt:
    embeds: np.ndarray    # [L, hidden]: the talker prefill inputs
    trailing: np.ndarray  # [Lt, hidden]: added to the input of generation step i < Lt
    tts_pad: np.ndarray   # [hidden]: added to the input of generation steps i >= Lt

    def trailing_at(self, step: int) -> np.ndarray:
        """What Qwen3TTSTalkerForConditionalGeneration.forward adds to generation step `step`'s input."""
        return self.trailing[step] if step < self.trailing.shape[0] else self.tts_pad


def _cat(*parts) -> np.ndarray:
    return np.concatenate([p for p in parts if p is not None and p.shape[0]], axis=0)


class PromptBuilder:
    """Builds Prompts for one model. talker: reference Talker; predictor: reference CodePredictor
    (its codec embeddings embed reference codes of groups 1..15); config: the checkpoint's config.json."""

    def __init__(self, config: dict, talker, predictor, tokenizer: tk.Qwen2Tokenizer):
        self.config = config
        self.tc = config["talker_config"]
        self.talker = talker
        self.predictor = predictor
        self.tokenizer = tokenizer
        self.model_type = config.get("tts_model_type")
        self.model_size = str(config.get("tts_model_size", ""))

    # ------------------------------------------------------------------ helpers
    def supported_languages(self) -> list[str]:
        """Qwen3TTSForConditionalGeneration.supported_languages: auto + every non-dialect language."""
        return ["auto"] + [k for k in self.tc.get("codec_language_id", {}) if "dialect" not in k]

    def supported_speakers(self) -> list[str]:
        return list(self.tc.get("spk_id", {}))

    def _check_language(self, language: str) -> None:
        if language is None or str(language).lower() not in {x.lower() for x in self.supported_languages()}:
            raise ValueError(f"Unsupported languages: [{language!r}]. Supported: {sorted(self.supported_languages())}")

    def _check_model_type(self, want: str, method: str) -> None:
        if self.model_type != want:
            raise ValueError(f"a {self.model_type} model does not support {method} (needs a {want} model)")

    def ref_code_embeds(self, ref_codes: np.ndarray) -> np.ndarray:
        """Sum of the 16 code embeddings of each reference frame [T, 16] -> [T, hidden]: group 0 from
        the talker's codec embedding, group g from the predictor's codec_embedding[g - 1]."""
        codes = np.asarray(ref_codes, dtype=np.int64)
        acc = self.talker.codec_embed(codes[:, 0])
        for g in range(1, codes.shape[1]):
            acc = acc + self.predictor.codec_embedding[g - 1][codes[:, g]]
        return acc

    # ------------------------------------------------------------------ the model's prompt
    def build(self, input_ids, *, language: str = "auto", speaker: str | None = None,
              speaker_embedding: np.ndarray | None = None, instruct_ids=None, ref_ids=None,
              ref_codes: np.ndarray | None = None, non_streaming_mode: bool = False) -> Prompt:
        """One item of Qwen3TTSForConditionalGeneration.generate, from token ids.

        input_ids: ids of assistant_text(text); instruct_ids: ids of instruct_text(...) or None;
        ref_ids: ids of ref_text(...) (ICL); ref_codes [T, 16] (ICL); speaker: CustomVoice speaker
        name; speaker_embedding: a Base voice's x-vector [hidden] (x-vector and ICL modes).
        """
        T, tc, cfg = self.talker, self.tc, self.config
        ids = np.asarray(input_ids, dtype=np.int64).reshape(-1)

        # speaker row: CustomVoice speaker id (a codec embedding row) or the voice's x-vector
        speaker_embed = None
        if speaker_embedding is not None:
            speaker_embed = np.asarray(speaker_embedding, dtype=np.float32).reshape(1, -1)
        elif speaker not in (None, ""):
            if speaker.lower() not in tc["spk_id"]:
                raise NotImplementedError(f"Speaker {speaker} not implemented")
            speaker_embed = T.codec_embed([tc["spk_id"][speaker.lower()]])

        if language is None:
            raise ValueError("language must be given ('auto' for none)")
        if language.lower() == "auto":
            language_id = None
        else:
            if language.lower() not in tc["codec_language_id"]:
                raise NotImplementedError(f"Language {language} not implemented")
            language_id = tc["codec_language_id"][language.lower()]
        # dialect speakers speak their dialect when asked for chinese or auto
        if (language.lower() in ("chinese", "auto") and speaker not in (None, "")
                and tc["spk_is_dialect"][speaker.lower()] is not False):
            language_id = tc["codec_language_id"][tc["spk_is_dialect"][speaker.lower()]]

        tts_bos, tts_eos, tts_pad = T.text_embed([cfg["tts_bos_token_id"], cfg["tts_eos_token_id"],
                                                  cfg["tts_pad_token_id"]])[:, None, :]
        if language_id is None:
            tags = [tc["codec_nothink_id"], tc["codec_think_bos_id"], tc["codec_think_eos_id"]]
        else:
            tags = [tc["codec_think_id"], tc["codec_think_bos_id"], language_id, tc["codec_think_eos_id"]]
        codec = _cat(T.codec_embed(tags), speaker_embed, T.codec_embed([tc["codec_pad_id"], tc["codec_bos_id"]]))
        n = codec.shape[0]

        role = T.text_embed(ids[:3])                                        # <|im_start|>assistant\n
        head = _cat(np.repeat(tts_pad, n - 2, axis=0), tts_bos) + codec[:-1]  # text pads/bos + codec tags
        embeds = _cat(role, head)

        if ref_codes is not None:
            if ref_ids is None:
                raise ValueError("an ICL prompt needs the reference text ids")
            icl, trailing = self._icl(ids[3:-5], np.asarray(ref_ids, dtype=np.int64).reshape(-1)[3:-2],
                                      ref_codes, tts_pad, tts_eos, non_streaming_mode)
            embeds = _cat(embeds, icl)
        elif non_streaming_mode:
            text = ids[3:-5]
            pads = T.codec_embed([tc["codec_pad_id"]] * (text.shape[0] + 1))
            embeds = _cat(embeds, _cat(T.text_embed(text), tts_eos) + pads,
                          tts_pad + T.codec_embed([tc["codec_bos_id"]]))
            trailing = tts_pad
        else:
            embeds = _cat(embeds, T.text_embed(ids[3:4]) + codec[-1:])  # first text token + codec bos
            trailing = _cat(T.text_embed(ids[4:-5]), tts_eos)

        if instruct_ids is not None:
            embeds = _cat(T.text_embed(np.asarray(instruct_ids, dtype=np.int64).reshape(-1)), embeds)
        return Prompt(embeds=embeds.astype(np.float32), trailing=trailing.astype(np.float32),
                      tts_pad=tts_pad[0].astype(np.float32))

    def _icl(self, text_ids, ref_ids, ref_codes, tts_pad, tts_eos, non_streaming_mode):
        """Qwen3TTSForConditionalGeneration.generate_icl_prompt -> (prefill tail, trailing text)."""
        T, tc = self.talker, self.tc
        text = _cat(T.text_embed(np.concatenate([ref_ids, text_ids])), tts_eos)
        codec = _cat(T.codec_embed([tc["codec_bos_id"]]), self.ref_code_embeds(ref_codes))
        nt, nc = text.shape[0], codec.shape[0]
        if non_streaming_mode:
            icl = _cat(text + T.codec_embed([tc["codec_pad_id"]] * nt), codec + tts_pad)
            return icl, tts_pad
        if nt > nc:
            return text[:nc] + codec, text[nc:]
        text = _cat(text, np.repeat(tts_pad, nc - nt, axis=0))
        return text + codec, tts_pad

    # ------------------------------------------------------------------ the wrapper's entry points
    def tokenize(self, text: str) -> np.ndarray:
        return self.tokenizer.encode(text)

    def voice_clone(self, text: str, *, ref_codes=None, speaker_embedding=None, ref_text: str | None = None,
                    x_vector_only: bool = False, language: str | None = None,
                    non_streaming_mode: bool = False) -> Prompt:
        """Qwen3TTSModel.generate_voice_clone with a prompt item of create_voice_clone_prompt (Base).
        ICL (x_vector_only=False) needs ref_text and ref_codes [T, 16]; both modes use the x-vector."""
        self._check_model_type("base", "generate_voice_clone")
        language = "Auto" if language is None else language
        self._check_language(language)
        if speaker_embedding is None:
            raise ValueError("a voice clone needs the reference speaker embedding")
        ids = self.tokenize(tk.assistant_text(text))
        if x_vector_only:
            return self.build(ids, language=language, speaker_embedding=speaker_embedding,
                              non_streaming_mode=non_streaming_mode)
        if not ref_text:
            raise ValueError("ref_text is required when x_vector_only_mode=False (ICL mode)")
        if ref_codes is None:
            raise ValueError("ICL mode needs the reference codes")
        return self.build(ids, language=language, speaker_embedding=speaker_embedding,
                          ref_ids=self.tokenize(tk.ref_text(ref_text)), ref_codes=ref_codes,
                          non_streaming_mode=non_streaming_mode)

    def custom_voice(self, text: str, *, speaker: str, language: str | None = None, instruct: str | None = None,
                     non_streaming_mode: bool = True) -> Prompt:
        """Qwen3TTSModel.generate_custom_voice (CustomVoice)."""
        self._check_model_type("custom_voice", "generate_custom_voice")
        language = "Auto" if language is None else language
        # Official: `if self.model.tts_model_size in "0b6": instruct = None`, a substring test, so
        # the 0.6B CustomVoice model silently drops instructions.
        if self.model_size in "0b6":
            instruct = None
        self._check_language(language)
        if speaker not in (None, "") and speaker.lower() not in {s.lower() for s in self.supported_speakers()}:
            raise ValueError(f"Unsupported speakers: [{speaker!r}]. Supported: {sorted(self.supported_speakers())}")
        ids = self.tokenize(tk.assistant_text(text))
        instruct_ids = self.tokenize(tk.instruct_text(instruct)) if instruct else None
        return self.build(ids, language=language, speaker=speaker, instruct_ids=instruct_ids,
                          non_streaming_mode=non_streaming_mode)

    def voice_design(self, text: str, *, instruct: str, language: str | None = None,
                     non_streaming_mode: bool = True) -> Prompt:
        """Qwen3TTSModel.generate_voice_design (VoiceDesign): the instruction describes the voice."""
        self._check_model_type("voice_design", "generate_voice_design")
        language = "Auto" if language is None else language
        self._check_language(language)
        ids = self.tokenize(tk.assistant_text(text))
        instruct_ids = self.tokenize(tk.instruct_text(instruct)) if instruct else None
        return self.build(ids, language=language, instruct_ids=instruct_ids, non_streaming_mode=non_streaming_mode)
