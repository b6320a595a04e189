"""F5-TTS benchmarks (bench/f5/gpu.py: vox on Vulkan beside the official code on CUDA)."""
