"""``tf.graph_util`` (``tf.compat.v1.graph_util``): freezing, pruning and importing GraphDefs."""

from ferroflow.framework.graph_util import (  # noqa: F401
    convert_variables_to_constants,
    extract_sub_graph,
    import_graph_def,
    must_run_on_cpu,
    remove_training_nodes,
    tensor_shape_from_node_def_name,
)
