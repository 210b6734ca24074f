//! Kernels that print tensors to stderr/stdout as a step runs.

use super::array::summarize;
use super::boxed;
use crate::kernel::{factory, KernelFactory};
use ferroflow_graph::AttrsExt;
use ferroflow_tensor::{Result, Tensor};
use std::io::Write;
use std::sync::atomic::{AtomicI64, Ordering};

pub(super) fn register(reg: &mut dyn FnMut(&str, KernelFactory)) {
    reg(
        "Timestamp",
        factory(|_| {
            boxed(|ctx| {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs_f64())
                    .unwrap_or(0.0);
                ctx.output(Tensor::scalar(now));
                Ok(())
            })
        }),
    );
    reg(
        "Print",
        factory(|init| {
            let message = init.node.attrs.str_or("message", "")?;
            let first_n = init.node.attrs.int_or("first_n", -1)?;
            let limit = init.node.attrs.int_or("summarize", 3)?.max(0) as usize;
            let printed = AtomicI64::new(0);
            boxed(move |ctx| {
                if first_n < 0 || printed.fetch_add(1, Ordering::Relaxed) < first_n {
                    let parts: Vec<String> = (1..ctx.num_inputs())
                        .map(|i| ctx.input(i).map(|t| summarize(t, limit)))
                        .collect::<Result<_>>()?;
                    eprintln!(
                        "{message}{}",
                        parts.iter().map(|p| format!("[{p}]")).collect::<String>()
                    );
                }
                let x = ctx.take_input(0)?;
                ctx.output(x);
                Ok(())
            })
        }),
    );
    reg(
        "PrintV2",
        factory(|init| {
            let template = init.node.attrs.str_or("template", "{}\n")?;
            let limit = init.node.attrs.int_or("summarize", 3)?.max(0) as usize;
            let to_stdout = init.node.attrs.str_or("output_stream", "stderr")? == "stdout";
            boxed(move |ctx| {
                let mut text = String::new();
                let mut pieces = template.split("{}");
                text.push_str(pieces.next().unwrap_or(""));
                for (i, piece) in pieces.enumerate() {
                    if i < ctx.num_inputs() {
                        let t = ctx.input(i)?;
                        let body = summarize(t, limit);
                        if t.rank() == 0 {
                            text.push_str(&body);
                        } else {
                            text.push('[');
                            text.push_str(&body);
                            text.push(']');
                        }
                    }
                    text.push_str(piece);
                }
                // Printing is best effort: a closed stream must not fail the step.
                if to_stdout {
                    let _ = std::io::stdout().write_all(text.as_bytes());
                } else {
                    let _ = std::io::stderr().write_all(text.as_bytes());
                }
                Ok(())
            })
        }),
    );
}
