from __future__ import annotations

from tritonclient.grpc import model_config_pb2

from studio.config.descriptors import is_map, is_message
from studio.config.schema import field_help, find_spec, schema_tree


def _descriptor_paths(desc, prefix=""):
    for fd in desc.fields:
        path = prefix + fd.name
        yield path
        if is_map(fd):
            v = fd.message_type.fields_by_name["value"]
            if v.message_type is not None:
                yield from _descriptor_paths(v.message_type, path + "[*].")
        elif is_message(fd):
            sep = "[*]." if fd.is_repeated else "."
            yield from _descriptor_paths(fd.message_type, path + sep)


def test_every_field_reachable_from_modelconfig_has_a_spec():
    want = set(_descriptor_paths(model_config_pb2.ModelConfig.DESCRIPTOR))
    have = {s.path for s in schema_tree().walk() if s.path}
    assert want == have
    assert len(want) > 150


def test_spec_details():
    assert find_spec("max_batch_size").kind == "int"
    assert find_spec("max_batch_size").int_range == (-(2**31), 2**31 - 1)
    assert find_spec("dynamic_batching.max_queue_delay_microseconds").int_range == (0, 2**64 - 1)
    dt = find_spec("input[0].data_type")
    assert dt.kind == "enum" and "TYPE_FP32" in dt.enum_values and dt.default == "TYPE_INVALID"
    assert find_spec("input[*].dims").repeated
    params = find_spec("parameters")
    assert params.kind == "map" and params.map_key_kind == "string" and params.map_value_kind == "message"
    assert find_spec('parameters["X"].string_value').kind == "string"
    prio = find_spec("dynamic_batching.priority_queue_policy")
    assert prio.map_key_kind == "int"
    vp = find_spec("version_policy")
    assert vp.oneof_members == {"policy_choice": ["latest", "all", "specific"]}
    assert schema_tree().oneof_members["scheduling_choice"] == [
        "dynamic_batching",
        "sequence_batching",
        "ensemble_scheduling",
    ]
    assert find_spec("instance_group[*].rate_limiter.resources[*].global").kind == "bool"


def test_help_covers_the_common_fields_and_names_real_paths():
    help_text = field_help()
    paths = {s.path for s in schema_tree().walk()}
    assert set(help_text) <= paths, set(help_text) - paths
    for common in [
        "platform", "backend", "runtime", "max_batch_size", "input", "output", "input[*].dims",
        "input[*].reshape", "version_policy", "instance_group", "dynamic_batching",
        "dynamic_batching.default_queue_policy", "dynamic_batching.priority_levels",
        "sequence_batching", "ensemble_scheduling", "parameters", "optimization", "model_warmup",
        "default_model_filename", "response_cache",
    ]:
        assert find_spec(common).help, common
