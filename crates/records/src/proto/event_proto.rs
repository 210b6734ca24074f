//! `Event` and the messages it carries (`tensorflow/core/util/event.proto`).

use super::summary_proto::Summary;

/// `tensorflow.Event`: one record of an event file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Event {
    /// Seconds since the epoch.
    #[prost(double, tag = "1")]
    pub wall_time: f64,
    /// Global step of the event.
    #[prost(int64, tag = "2")]
    pub step: i64,
    #[prost(oneof = "event::What", tags = "3, 4, 5, 6, 7, 8, 9")]
    pub what: Option<event::What>,
    /// Who wrote the file (set on the first event only).
    #[prost(message, optional, tag = "10")]
    pub source_metadata: Option<SourceMetadata>,
}

/// Nested types of [`Event`].
pub mod event {
    /// The `what` oneof of [`Event`](super::Event).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum What {
        /// `"brain.Event:<version>"`, on the first event of a file.
        #[prost(string, tag = "3")]
        FileVersion(String),
        /// A serialized `GraphDef`.
        #[prost(bytes, tag = "4")]
        GraphDef(Vec<u8>),
        #[prost(message, tag = "5")]
        Summary(super::Summary),
        /// Deprecated by TensorFlow; still parsed.
        #[prost(message, tag = "6")]
        LogMessage(super::LogMessage),
        #[prost(message, tag = "7")]
        SessionLog(super::SessionLog),
        #[prost(message, tag = "8")]
        TaggedRunMetadata(super::TaggedRunMetadata),
        /// A serialized `MetaGraphDef`.
        #[prost(bytes, tag = "9")]
        MetaGraphDef(Vec<u8>),
    }

    impl What {
        /// The oneof member's proto name (`"summary"`, `"file_version"`, ...).
        pub fn kind(&self) -> &'static str {
            match self {
                What::FileVersion(_) => "file_version",
                What::GraphDef(_) => "graph_def",
                What::Summary(_) => "summary",
                What::LogMessage(_) => "log_message",
                What::SessionLog(_) => "session_log",
                What::TaggedRunMetadata(_) => "tagged_run_metadata",
                What::MetaGraphDef(_) => "meta_graph_def",
            }
        }
    }
}

impl Event {
    /// An event at `wall_time` and `step`.
    pub fn new(wall_time: f64, step: i64, what: event::What) -> Event {
        Event {
            wall_time,
            step,
            what: Some(what),
            source_metadata: None,
        }
    }

    /// The summary, if this is a summary event.
    pub fn summary(&self) -> Option<&Summary> {
        match &self.what {
            Some(event::What::Summary(s)) => Some(s),
            _ => None,
        }
    }

    /// The oneof member's proto name, or `""` when nothing is set.
    pub fn kind(&self) -> &'static str {
        self.what.as_ref().map(event::What::kind).unwrap_or("")
    }
}

/// `tensorflow.SourceMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SourceMetadata {
    /// Name of the writer, e.g. `"tensorflow.core.util.events_writer"`.
    #[prost(string, tag = "1")]
    pub writer: String,
}

/// `LogMessage.Level`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum LogLevel {
    Unknown = 0,
    Debugging = 10,
    Info = 20,
    Warn = 30,
    Error = 40,
    Fatal = 50,
}

/// `tensorflow.LogMessage` (deprecated by TensorFlow).
#[derive(Clone, PartialEq, prost::Message)]
pub struct LogMessage {
    #[prost(enumeration = "LogLevel", tag = "1")]
    pub level: i32,
    #[prost(string, tag = "2")]
    pub message: String,
}

/// `SessionLog.SessionStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum SessionStatus {
    StatusUnspecified = 0,
    /// A (re)start; TensorBoard discards later-step data on a second START.
    Start = 1,
    Stop = 2,
    Checkpoint = 3,
}

/// `tensorflow.SessionLog`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SessionLog {
    #[prost(enumeration = "SessionStatus", tag = "1")]
    pub status: i32,
    #[prost(string, tag = "2")]
    pub checkpoint_path: String,
    #[prost(string, tag = "3")]
    pub msg: String,
}

/// `tensorflow.TaggedRunMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TaggedRunMetadata {
    #[prost(string, tag = "1")]
    pub tag: String,
    /// A serialized `RunMetadata`.
    #[prost(bytes = "vec", tag = "2")]
    pub run_metadata: Vec<u8>,
}
