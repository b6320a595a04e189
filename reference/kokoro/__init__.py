"""Kokoro-82M (StyleTTS2 / ISTFTNet) in numpy, and its English text frontend (frontend/).

Read beside the official kokoro 0.9.4 code: albert.py (PL-BERT, transformers' AlbertModel),
lstm.py, text_encoder.py and predictor.py (kokoro/modules.py), decoder.py, source.py and stft.py
(kokoro/istftnet.py), model.py (KModel.forward_with_tokens). Weights are a mapping of the .tmod's
tensor names (weight norm folded) to float32 arrays.
"""
