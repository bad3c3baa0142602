"""Demo model with a variable-size input: SUM = the sum of each row; cost 1 ms + 1 us per value."""

import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        values = 0
        inputs = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            values += x.size
            inputs.append(x)
        time.sleep(0.001 + 1e-6 * values)
        return [
            pb_utils.InferenceResponse(
                output_tensors=[pb_utils.Tensor("SUM", x.sum(axis=1, keepdims=True).astype(np.float32))]
            )
            for x in inputs
        ]
