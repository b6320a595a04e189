"""Text normalization shared by the families' frontends (the spec of core/src/text/): English
numbers, abbreviations, currency, dates and symbols read as words, before any G2P or tokenizer."""
