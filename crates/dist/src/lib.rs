//! Distributed training: TensorFlow 1.x's ps/worker runtime.
//!
//! * [`cluster`]: cluster specs (`tf.train.ClusterSpec`), device strings and
//!   `TF_CONFIG`, parsed once here for the Python face and the server binary.
//! * [`wire`]: the frames tasks exchange over TCP (optionally TLS): a
//!   protobuf header, then each tensor's raw bytes, so a tensor is written
//!   from and read into its own buffer (no protobuf copy, no size limit).
//! * [`server`]: one task's server (`tf.train.Server`): it holds the task's
//!   variables, queues and accumulators, shared by name across every client
//!   that registers a graph with it, and runs those graphs' partitions.
//! * [`client`]: connections to a peer task, its incarnation, retries.
//! * [`master`]: a session over a cluster (`tf.Session("grpc://...")`):
//!   it assigns every node of a step to a task by its device, cuts the step
//!   into partitions, and runs them in dependency order, moving the tensors
//!   that cross tasks.
//! * [`cli`]: `ferroflow server`, one task run from `TF_CONFIG` or flags.
//! * [`security`]: loopback by default; a cluster token or mutual TLS for
//!   anything else.
//!
//! How a step is split (a deliberate simplification of TensorFlow's
//! Send/Recv partitioning): every node gets a *stage*, the number of task
//! changes on its longest input path. The nodes of one task at one stage form
//! a partition; partitions of a stage run at the same time on their tasks,
//! and a tensor that crosses partitions travels through the master with the
//! partition runs' requests and replies. A parameter-server step is then three
//! rounds (read the variables on the ps, compute on the worker, apply on the
//! ps), one request per ps task per round, and no rendezvous state lives on
//! the tasks between requests. Variables and other resource-creating nodes
//! (no inputs, a reference or handle output) are copied into every partition
//! of their task that uses them: the task finds the resource by name.

pub mod cli;
pub mod client;
pub mod cluster;
pub mod fuzzing;
pub mod master;
pub mod security;
pub mod server;
pub mod wire;

pub use cluster::{ClusterSpec, TaskId, TfConfig};
pub use master::DistSession;
pub use security::{ClientSecurity, ServerSecurity};
pub use server::{Server, ServerOptions};
