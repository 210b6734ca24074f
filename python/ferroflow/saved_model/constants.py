"""File and collection names of the SavedModel format (``tf.saved_model.constants``)."""

#: Sub-directory of a SavedModel holding asset files (vocabularies and the like).
ASSETS_DIRECTORY = "assets"
#: Collection of ``AssetFileDef`` protos (packed in ``Any``) that TF1 builders write.
ASSETS_KEY = "saved_model_assets"
#: Sub-directory for debug information.
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
#: Collection holding the init op of SavedModels written before ``main_op`` existed.
LEGACY_INIT_OP_KEY = "legacy_init_op"
#: Collection holding the op a loader runs after restoring the variables.
MAIN_OP_KEY = "saved_model_main_op"
#: Collection holding a training op (TF2's ``Builder``).
TRAIN_OP_KEY = "saved_model_train_op"
#: Signature keys TF2's builder uses for the init and train ops.
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
#: The ``saved_model_schema_version`` written into ``saved_model.pb``.
SAVED_MODEL_SCHEMA_VERSION = 1
#: Sub-directory with the variables checkpoint, and the checkpoint's prefix inside it.
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
