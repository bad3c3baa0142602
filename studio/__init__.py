"""Triton Config Studio: a desktop studio for NVIDIA Triton Inference Server model repositories."""

__version__ = "0.1.0"
