"""The init ops SavedModel loaders run after restoring variables (``tf.saved_model.main_op``)."""

from ferroflow.framework import ops
from ferroflow.ops import control_flow_ops, variables
from ferroflow.ops.lookup_ops import tables_initializer


def main_op():
    """An op initializing the global and local variables and the lookup tables.

    As in TensorFlow, the global variables too: a loader runs it after the
    restore, so a model exported with it serves its initial values;
    ``main_op_with_restore`` runs the restore after it instead.
    """
    return control_flow_ops.group(variables.global_variables_initializer(), variables.local_variables_initializer(),
                                  tables_initializer())


def main_op_with_restore(restore_op_name):
    """``main_op()`` followed by the op named ``restore_op_name`` (a Saver's restore op)."""
    if isinstance(restore_op_name, (str, bytes)):
        name = restore_op_name.decode() if isinstance(restore_op_name, bytes) else restore_op_name
        restore_op_name = ops.get_default_graph().as_graph_element(name)
    with ops.control_dependencies([main_op()]):
        return control_flow_ops.group(restore_op_name)
