"""reference/qwen3"""
