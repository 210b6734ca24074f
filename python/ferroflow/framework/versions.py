"""Version constants: ferroflow's own release, the TensorFlow version it presents, and the GraphDef version."""

__version__ = "0.1.0"
# A PEP 440 version (a local label after "+"): TensorFlow's import_meta_graph parses
# the meta graph's tensorflow_version with `packaging`, which rejects "1.15.0-ferroflow".
VERSION = "1.15.0+ferroflow"
# The GraphDef producer version written into exported graphs (TensorFlow 2.21's).
GRAPH_DEF_VERSION = 1994
# The oldest GraphDef versions a consumer reads and a producer may write (TensorFlow's are 0 too).
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
# What exported meta graphs record as the git version.
GIT_VERSION = "ferroflow-" + __version__
# TensorFlow names the C++ compiler of its build; ferroflow's native core is Rust.
COMPILER_VERSION = "rustc (ferroflow " + __version__ + ")"
