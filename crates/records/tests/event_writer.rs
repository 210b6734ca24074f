//! Behaviour of the background event-file writer: queueing, flushing,
//! closing, reopening and file naming.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::TempDir;
use ferroflow_records::events::{self, summary_event, SOURCE_WRITER};
use ferroflow_records::proto::{event::What, Event, Message, SessionStatus, Summary};
use ferroflow_records::summary::scalar;
use ferroflow_records::{Code, Compression, EventFileWriter, ReadOptions, RecordReader};

/// Events currently readable from `path` (a tailing read: the writer may be
/// in the middle of a record).
fn read(path: &Path) -> Vec<Event> {
    RecordReader::open(path, Compression::None, ReadOptions::tailing())
        .unwrap()
        .map(|r| Event::decode(r.unwrap().as_slice()).unwrap())
        .collect()
}

fn loss(step: i64) -> Event {
    summary_event(
        Summary::from_values(vec![scalar("loss", step as f32)]),
        step,
    )
}

fn steps(events: &[Event]) -> Vec<i64> {
    events
        .iter()
        .filter(|e| e.summary().is_some())
        .map(|e| e.step)
        .collect()
}

#[test]
fn first_event_is_the_file_version_and_the_directory_is_created() {
    let tmp = TempDir::new("first");
    let logdir = tmp.path().join("a").join("b");
    let writer = EventFileWriter::new(&logdir, "", 10, 120.0).unwrap();
    assert_eq!(writer.path().parent().unwrap(), logdir);
    // Written and flushed at creation, before any other event.
    let events = read(&writer.path());
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].what,
        Some(What::FileVersion("brain.Event:2".into()))
    );
    assert_eq!(
        events[0].source_metadata.as_ref().unwrap().writer,
        SOURCE_WRITER
    );
    assert_eq!(events[0].wall_time.fract(), 0.0);
    let name = writer
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert_eq!(
        name,
        events::event_file_name(events[0].wall_time as u64, &events::hostname(), "")
    );
}

#[test]
fn flush_makes_every_queued_event_visible() {
    let tmp = TempDir::new("flush");
    let writer = EventFileWriter::new(tmp.path(), ".v2", 100, 3600.0).unwrap();
    for step in 0..50 {
        writer.add_event(&loss(step)).unwrap();
    }
    writer.flush().unwrap();
    assert_eq!(steps(&read(&writer.path())), (0..50).collect::<Vec<_>>());
    writer
        .add_summary(Summary::from_values(vec![scalar("acc", 0.5)]), 50)
        .unwrap();
    writer.flush().unwrap();
    assert_eq!(read(&writer.path()).len(), 52);
}

#[test]
fn flush_secs_flushes_without_being_asked() {
    let tmp = TempDir::new("timer");
    let writer = EventFileWriter::new(tmp.path(), "", 10, 0.05).unwrap();
    writer.add_event(&loss(7)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if steps(&read(&writer.path())) == [7] {
            break;
        }
        assert!(Instant::now() < deadline, "event not flushed within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_periodic_flush_keeps_the_order_of_events() {
    // A 1 ms timer makes the writer thread take queued events while adders
    // are handing over full batches: the file must still be in add order.
    let tmp = TempDir::new("timer_order");
    let writer = EventFileWriter::new(tmp.path(), "", 7, 0.001).unwrap();
    for step in 0..5000 {
        writer.add_event(&loss(step)).unwrap();
        if step % 97 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    writer.close().unwrap();
    assert_eq!(steps(&read(&writer.path())), (0..5000).collect::<Vec<_>>());
}

#[test]
fn a_small_queue_shared_by_threads_loses_nothing() {
    let tmp = TempDir::new("threads");
    let writer = Arc::new(EventFileWriter::new(tmp.path(), "", 1, 3600.0).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let w = Arc::clone(&writer);
            std::thread::spawn(move || {
                for i in 0..100 {
                    w.add_event(&loss(t * 1000 + i)).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    writer.close().unwrap();
    let got = steps(&read(&writer.path()));
    assert_eq!(got.len(), 400);
    for t in 0..4 {
        let mine: Vec<i64> = got.iter().copied().filter(|s| s / 1000 == t).collect();
        assert_eq!(
            mine,
            (0..100).map(|i| t * 1000 + i).collect::<Vec<_>>(),
            "thread {t} order"
        );
    }
}

#[test]
fn close_reopen_and_drop() {
    let tmp = TempDir::new("reopen");
    let writer = EventFileWriter::new(tmp.path(), ".x", 10, 3600.0).unwrap();
    writer.add_event(&loss(1)).unwrap();
    writer.close().unwrap();
    writer.close().unwrap();
    assert!(writer.is_closed());
    let first = writer.path();
    assert_eq!(steps(&read(&first)), [1]);

    let err = writer.add_event(&loss(2)).unwrap_err();
    assert_eq!(err.code(), Some(Code::FailedPrecondition));
    assert!(writer.flush().is_err());

    // Reopening starts a new file (never appends to the old one), even
    // within the same second.
    writer.reopen().unwrap();
    let second = writer.path();
    assert_ne!(first, second);
    assert!(second
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .ends_with(".x"));
    let mut names = vec![first.clone(), second.clone()];
    names.sort();
    assert_eq!(
        names,
        [first.clone(), second.clone()],
        "newer file sorts last"
    );
    writer.add_event(&loss(3)).unwrap();
    drop(writer); // closes and flushes
    let events = read(&second);
    assert_eq!(events[0].kind(), "file_version");
    assert_eq!(steps(&events), [3]);
    assert_eq!(steps(&read(&first)), [1]);
}

#[test]
fn writers_created_together_get_distinct_files() {
    let tmp = TempDir::new("together");
    let writers: Vec<_> = (0..3)
        .map(|_| EventFileWriter::new(tmp.path(), "", 10, 3600.0).unwrap())
        .collect();
    for (i, w) in writers.iter().enumerate() {
        w.add_event(&loss(i as i64)).unwrap();
        w.close().unwrap();
    }
    for (i, w) in writers.iter().enumerate() {
        assert_eq!(steps(&read(&w.path())), [i as i64]);
    }
}

#[test]
fn session_log_events() {
    let tmp = TempDir::new("session");
    let writer = EventFileWriter::new(tmp.path(), "", 10, 3600.0).unwrap();
    writer
        .add_event(&events::session_log_event(SessionStatus::Start, "", 5))
        .unwrap();
    writer.close().unwrap();
    let events = read(&writer.path());
    match &events[1].what {
        Some(What::SessionLog(log)) => assert_eq!(log.status, SessionStatus::Start as i32),
        other => panic!("{other:?}"),
    }
    assert_eq!(events[1].step, 5);
}

#[test]
fn bad_arguments_and_unwritable_logdir() {
    let tmp = TempDir::new("bad");
    for secs in [0.0, -1.0, f64::NAN] {
        let err = EventFileWriter::new(tmp.path(), "", 10, secs).unwrap_err();
        assert_eq!(err.code(), Some(Code::InvalidArgument));
    }
    // A logdir below a regular file cannot be created.
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let err = EventFileWriter::new(file.join("sub"), "", 10, 1.0).unwrap_err();
    assert!(err.message().contains("file"), "{err}");
}
