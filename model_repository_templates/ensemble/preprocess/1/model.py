"""Preprocess: scale each row to [0, 1], then pad with zeros or cut to 16 features."""

import numpy as np
import triton_python_backend_utils as pb_utils

WIDTH = 16


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            raw = pb_utils.get_input_tensor_by_name(request, "RAW").as_numpy().astype(np.float32)
            lo = raw.min(axis=1, keepdims=True)
            span = np.maximum(raw.max(axis=1, keepdims=True) - lo, 1e-6)
            scaled = (raw - lo) / span
            out = np.zeros((raw.shape[0], WIDTH), dtype=np.float32)
            n = min(WIDTH, raw.shape[1])
            out[:, :n] = scaled[:, :n]
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("FEATURES", out)]))
        return responses
