"""Write tests/fixtures/summary/initialize.json: what TensorFlow 2.21's ``tf.compat.v1.summary.initialize``
does in graph mode when the thread has no default TF 2 summary writer (the only state a TF1 program
reaches without ``tf.contrib.summary``/``tf.compat.v2.summary.create_file_writer``).

Run from the repository root with the TensorFlow virtualenv (the tests never need TensorFlow):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_summary_initialize_fixtures.py

Per case (which arguments were given, whether a default session was open): the exception's class
name and message, or null when the call returned; and the graph's ops afterwards (it held one
constant, ``c``, before).
"""

import json
import pathlib

import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "summary"
v1 = tf.compat.v1


def _outcome(**kwargs):
    try:
        v1.summary.initialize(**kwargs)
    except Exception as e:  # noqa: BLE001 - recording whatever TF raises
        return {"error": type(e).__name__, "message": str(e)}
    return None


def main():
    v1.disable_eager_execution()
    cases = []
    for with_graph in (False, True):
        for with_session in ("none", "argument", "default"):
            graph = tf.Graph()
            with graph.as_default():
                tf.constant(1.0, name="c")
                sess = v1.Session(graph=graph)
                kwargs = {}
                if with_graph:
                    kwargs["graph"] = graph
                if with_session == "argument":
                    kwargs["session"] = sess
                if with_session == "default":
                    with sess.as_default():
                        outcome = _outcome(**kwargs)
                else:
                    outcome = _outcome(**kwargs)
                sess.close()
            ops = [op.name for op in graph.get_operations()]
            cases.append({"graph": with_graph, "session": with_session, "outcome": outcome, "ops_after": ops})
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "initialize.json"
    path.write_text(json.dumps({"tensorflow": tf.__version__, "cases": cases}, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
