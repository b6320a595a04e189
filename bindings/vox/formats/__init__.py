"""vox model (.tmod) and voice (.tvoice) files: writers, validating readers, quantization."""
