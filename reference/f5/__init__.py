"""F5-TTS (DiT + conditional flow matching + Vocos) in numpy."""
