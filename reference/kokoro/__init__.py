"""vox.reference.kokoro: Kokoro-82M (StyleTTS2 family) in numpy, and its English text frontend."""
