"""vox.verify.perceptual: validation by ear. Synthesized speech is transcribed by an ASR model
(whisper-base, from its PyPI wheels, through faster-whisper) and scored by word error rate after text
normalization; its spectrum is compared with the official model's, so that a divergence one hears
(a "metallic" high-frequency tilt) fails even when every word is right."""
