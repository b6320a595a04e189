"""Comparison of the Qwen3-TTS-12Hz reference (and native core) with the official qwen-tts code."""
