"""Demo model for Triton's python backend: a fixed cost per execute plus a small cost per batch item."""

import json
import time

import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        params = json.loads(args["model_config"]).get("parameters", {})
        self.fixed = int(params.get("FIXED_COST_US", {}).get("string_value", "2000")) / 1e6
        self.per_item = int(params.get("PER_ITEM_COST_US", {}).get("string_value", "20")) / 1e6

    def execute(self, requests):
        items = 0
        inputs = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            items += x.shape[0]
            inputs.append(x)
        time.sleep(self.fixed + self.per_item * items)
        return [pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", x)]) for x in inputs]
