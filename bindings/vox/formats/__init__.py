"""vox model (.tmod) and voice (.tvoice) files (docs/formats.md).

    tmod    streaming writer (TmodWriter, write_tmod), validating mmap reader (TmodFile),
            read_checkpoint (a .tmod as a reference Checkpoint, dequantized on access)
    native  the same .tmod opened by the C core (NativeModel: vox_model_open / _verify)
    tvoice  Voice, write_voice, read_voice, check_model
    quant   q8 / q4 block quantization, the definition of their layout
"""
