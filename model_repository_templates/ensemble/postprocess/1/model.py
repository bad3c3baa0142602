"""Postprocess: argmax of the scores as an INT32 label."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            scores = pb_utils.get_input_tensor_by_name(request, "SCORES").as_numpy()
            label = scores.argmax(axis=1).astype(np.int32).reshape(-1, 1)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("LABEL", label)]))
        return responses
