"""The Qwen3-TTS-12Hz family (Base voice cloning, CustomVoice speakers and instructions, VoiceDesign;
0.6B and 1.7B): its options, and the hooks the generic layers call (vox.families.base.Family)."""

from __future__ import annotations

from .family import FAMILY, CloneOptions, Options, decode, prompt, teacher_force

__all__ = ["FAMILY", "Options", "CloneOptions", "teacher_force", "prompt", "decode"]
