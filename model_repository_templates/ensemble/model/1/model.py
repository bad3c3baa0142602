"""Model: a fixed linear map from 16 features to 4 class scores."""

import numpy as np
import triton_python_backend_utils as pb_utils

WEIGHTS = np.stack([np.roll(np.linspace(-1.0, 1.0, 16, dtype=np.float32), 4 * k) for k in range(4)], axis=1)


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "FEATURES").as_numpy()
            scores = (x @ WEIGHTS).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("SCORES", scores)]))
        return responses
