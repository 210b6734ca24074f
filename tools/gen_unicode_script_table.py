"""Write crates/runtime/src/kernels/unicode_script_table.rs: the ICU script code (UScriptCode) of every Unicode
code point, as TensorFlow's UnicodeScript op returns it, stored as sorted ranges.

The table is a fact about TensorFlow 2.21's bundled ICU, read from TensorFlow itself so ferroflow's
``tf.strings.unicode_script`` returns the same codes. Run from the repository root:

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/gen_unicode_script_table.py
"""

import pathlib

import numpy as np
import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "crates" / "runtime" / "src" / "kernels" / "unicode_script_table.rs"


def main():
    cps = np.arange(0, 0x110000, dtype=np.int32)
    codes = tf.strings.unicode_script(cps).numpy()
    starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
    assert codes.min() >= 0 and codes.max() < 256
    lines = [
        "//! ICU's script code (`UScriptCode`) of each Unicode code point, as ranges",
        "//! `(first code point, code)` sorted by first code point. Generated from",
        "//! TensorFlow 2.21's `UnicodeScript` op by `tools/gen_unicode_script_table.py`;",
        "//! do not edit.",
        "",
        "/// `(first code point of a run, script code of the run)`, sorted.",
        "#[rustfmt::skip]",
        f"pub(crate) static RANGES: [(u32, u8); {len(starts)}] = [",
    ]
    row = []
    for s in starts:
        row.append(f"(0x{int(s):x}, {int(codes[s])}),")
        if len(row) == 8:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append("];")
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT} ({len(starts)} ranges)")


if __name__ == "__main__":
    main()
