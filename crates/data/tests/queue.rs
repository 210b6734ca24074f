//! The queue resource driven directly: ordering, batching without copies,
//! padding, waiting and cancellation.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ferroflow_data::queue::{DequeueMode, Queue, QueueConfig, QueueKind};
use ferroflow_graph::PartialShape;
use ferroflow_runtime::blocking::{with_deadline, Cancellable};
use ferroflow_tensor::{Code, DType, Tensor};

fn config(kind: QueueKind, capacity: Option<usize>, shapes: Vec<PartialShape>) -> QueueConfig {
    QueueConfig {
        kind,
        name: "_0_q".into(),
        dtypes: vec![DType::Float32; shapes.len().max(1)],
        shapes,
        capacity,
        min_after_dequeue: 0,
        seed: 1,
        seed2: 2,
    }
}

fn vec2() -> PartialShape {
    PartialShape::from_dims(vec![Some(2)])
}

#[test]
fn dequeue_many_of_one_whole_enqueued_batch_shares_its_buffer() {
    let q = Queue::new(config(QueueKind::Fifo, Some(10), vec![vec2()])).unwrap();
    let batch = Tensor::from_vec(vec![3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    q.enqueue(vec![batch.clone()], true).unwrap();
    let out = q.dequeue(3, DequeueMode::Many).unwrap();
    assert!(
        out[0].shares_buffer_with(&batch),
        "no copy for a whole batch"
    );
    // Rows of a batch dequeued one at a time and re-batched are copied once each.
    q.enqueue(vec![batch.clone()], true).unwrap();
    let first = q.dequeue(1, DequeueMode::One).unwrap();
    assert_eq!(first[0].as_slice::<f32>().unwrap(), &[1.0, 2.0]);
    let rest = q.dequeue(2, DequeueMode::Many).unwrap();
    assert_eq!(rest[0].dims(), &[2, 2]);
    assert_eq!(rest[0].as_slice::<f32>().unwrap(), &[3.0, 4.0, 5.0, 6.0]);
}

#[test]
fn padding_queue_pads_to_the_largest_element() {
    let shape = PartialShape::from_dims(vec![None]);
    let q = Queue::new(config(QueueKind::Padding, None, vec![shape])).unwrap();
    q.enqueue(vec![Tensor::vector(vec![1.0f32])], false)
        .unwrap();
    q.enqueue(vec![Tensor::vector(vec![2.0f32, 3.0, 4.0])], false)
        .unwrap();
    let out = q.dequeue(2, DequeueMode::Many).unwrap();
    assert_eq!(out[0].dims(), &[2, 3]);
    assert_eq!(
        out[0].as_slice::<f32>().unwrap(),
        &[1.0, 0.0, 0.0, 2.0, 3.0, 4.0]
    );
}

#[test]
fn enqueue_waits_for_room_and_dequeue_for_elements() {
    let q = Arc::new(
        Queue::new(config(
            QueueKind::Fifo,
            Some(2),
            vec![PartialShape::scalar()],
        ))
        .unwrap(),
    );
    let producer = {
        let q = q.clone();
        thread::spawn(move || {
            for i in 0..20 {
                q.enqueue(vec![Tensor::scalar(i as f32)], false).unwrap();
            }
        })
    };
    let got = q.dequeue(20, DequeueMode::Many).unwrap();
    producer.join().unwrap();
    let want: Vec<f32> = (0..20).map(|i| i as f32).collect();
    assert_eq!(got[0].as_slice::<f32>().unwrap(), want.as_slice());
}

#[test]
fn cancel_wakes_every_waiter_at_once() {
    let full = Arc::new(
        Queue::new(config(
            QueueKind::Fifo,
            Some(1),
            vec![PartialShape::scalar()],
        ))
        .unwrap(),
    );
    let empty = Arc::new(
        Queue::new(config(
            QueueKind::Fifo,
            Some(1),
            vec![PartialShape::scalar()],
        ))
        .unwrap(),
    );
    full.enqueue(vec![Tensor::scalar(1.0f32)], false).unwrap();
    let waiters: Vec<_> = (0..8)
        .map(|i| {
            let (full, empty) = (full.clone(), empty.clone());
            thread::spawn(move || {
                if i % 2 == 0 {
                    full.enqueue(vec![Tensor::scalar(2.0f32)], false).err()
                } else {
                    empty.dequeue(1, DequeueMode::One).err()
                }
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(50));
    let start = Instant::now();
    full.cancel();
    empty.cancel();
    let codes: Vec<_> = waiters
        .into_iter()
        .map(|t| t.join().unwrap().and_then(|e| e.code()))
        .collect();
    assert!(start.elapsed() < Duration::from_secs(1));
    assert!(
        codes.iter().all(|c| *c == Some(Code::Cancelled)),
        "{codes:?}"
    );
}

#[test]
fn closed_queue_refuses_enqueues_and_ends_dequeues() {
    let q = Queue::new(config(QueueKind::Fifo, None, vec![PartialShape::scalar()])).unwrap();
    q.enqueue(vec![Tensor::scalar(1.0f32)], false).unwrap();
    q.close(false);
    let err = q.enqueue(vec![Tensor::scalar(2.0f32)], false).unwrap_err();
    assert_eq!(err.code(), Some(Code::Cancelled));
    assert_eq!(q.dequeue(3, DequeueMode::UpTo).unwrap()[0].dims(), &[1]);
    let err = q.dequeue(1, DequeueMode::One).unwrap_err();
    assert_eq!(err.code(), Some(Code::OutOfRange));
    assert!(err
        .message()
        .contains("FIFOQueue '_0_q' is closed and has insufficient elements"));
}

#[test]
fn a_dequeue_honours_the_run_deadline() {
    let q = Queue::new(config(QueueKind::Fifo, None, vec![PartialShape::scalar()])).unwrap();
    let err = with_deadline(Some(Instant::now() + Duration::from_millis(20)), || {
        q.dequeue(1, DequeueMode::One)
    })
    .unwrap_err();
    assert_eq!(err.code(), Some(Code::DeadlineExceeded));
}

#[test]
fn shuffle_queue_is_deterministic_for_a_seed() {
    let run = || {
        let mut cfg = config(QueueKind::Shuffle, None, vec![PartialShape::scalar()]);
        cfg.min_after_dequeue = 3;
        let q = Queue::new(cfg).unwrap();
        let xs: Vec<f32> = (0..30).map(|i| i as f32).collect();
        q.enqueue(vec![Tensor::vector(xs)], true).unwrap();
        q.close(false);
        q.dequeue(30, DequeueMode::UpTo).unwrap()[0]
            .as_slice::<f32>()
            .unwrap()
            .to_vec()
    };
    let a = run();
    assert_eq!(a, run());
    let mut sorted = a.clone();
    sorted.sort_by(f32::total_cmp);
    assert_eq!(sorted, (0..30).map(|i| i as f32).collect::<Vec<_>>());
    assert_ne!(a, sorted, "shuffled");
}
