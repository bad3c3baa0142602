"""A Triton python-backend model: OUTPUT0 = INPUT0 * 2. Replace execute() with your own logic."""

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        """Called once when Triton loads the model; args["model_config"] is the config as JSON."""

    def execute(self, requests):
        """One response per request, in the same order."""
        responses = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT0").as_numpy()
            y = (x * 2).astype(np.float32)
            responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT0", y)]))
        return responses

    def finalize(self):
        """Called once when Triton unloads the model."""
