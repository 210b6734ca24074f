//! Iterator resources: the state `IteratorGetNext` pulls from.

use super::{CancelToken, DatasetIter, DatasetRef, Element, IterCtx};
use ferroflow_graph::PartialShape;
use ferroflow_runtime::blocking::Cancellable;
use ferroflow_tensor::{bail, ensure, DType, Error, Result};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// An iterator resource (`IteratorV2`, a one-shot iterator, or one found
/// by its string handle). `MakeIterator` (re)starts it on a dataset;
/// `IteratorGetNext` pulls the next element. Cancelling it (on
/// `Session.close`) wakes a waiting `get_next` and stops its threads.
pub struct IteratorResource {
    tree: Mutex<Option<Box<dyn DatasetIter>>>,
    token: Mutex<Arc<CancelToken>>,
    cancelled: AtomicBool,
    pub(crate) registered: AtomicBool,
    /// The name `IteratorToStringHandle` gives out.
    pub handle: String,
    /// What every element must be (`output_types`; empty: unchecked).
    pub output_types: Vec<DType>,
    /// The shapes elements must be compatible with (`output_shapes`;
    /// empty: unchecked).
    pub output_shapes: Vec<PartialShape>,
    /// Where the iterator was made, for messages.
    pub name: String,
}

impl IteratorResource {
    pub fn new(
        name: &str,
        output_types: Vec<DType>,
        output_shapes: Vec<PartialShape>,
    ) -> IteratorResource {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        IteratorResource {
            tree: Mutex::new(None),
            token: Mutex::new(Arc::new(CancelToken::default())),
            cancelled: AtomicBool::new(false),
            registered: AtomicBool::new(false),
            handle: format!(
                "ferroflow_iterator_{}_{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
            output_types,
            output_shapes,
            name: name.to_string(),
        }
    }

    fn check_open(&self) -> Result<()> {
        if self.cancelled.load(Ordering::Acquire) {
            bail!(
                cancelled,
                "Iterator {} was cancelled (its session closed)",
                self.name
            );
        }
        Ok(())
    }

    /// Starts iterating `dataset` from its beginning, dropping (and so
    /// stopping) the previous iteration.
    pub fn make(&self, dataset: &DatasetRef) -> Result<()> {
        self.check_open()?;
        let token = Arc::new(CancelToken::default());
        let ctx = IterCtx {
            token: token.clone(),
        };
        let tree = dataset.0.iterate(&ctx)?;
        // Wake a get_next still waiting on the old tree before taking its lock.
        std::mem::replace(&mut *self.token.lock(), token).cancel();
        let old = self.tree.lock().replace(tree);
        drop(old);
        Ok(())
    }

    /// Starts iterating `dataset` unless already started (one-shot iterators).
    pub fn make_once(&self, dataset: impl FnOnce() -> Result<DatasetRef>) -> Result<()> {
        self.check_open()?;
        let mut tree = self.tree.lock();
        if tree.is_none() {
            let ctx = IterCtx {
                token: self.token.lock().clone(),
            };
            *tree = Some(dataset()?.0.iterate(&ctx)?);
        }
        Ok(())
    }

    /// The next element: `OutOfRangeError` ("End of sequence") at the end.
    pub fn get_next(&self) -> Result<Element> {
        self.check_open()?;
        let mut tree = self.tree.lock();
        let Some(it) = tree.as_mut() else {
            bail!(
                failed_precondition,
                "GetNext() failed because the iterator has not been initialized. Ensure that you have run the initializer operation for this iterator before getting the next element."
            );
        };
        match it.next()? {
            Some(e) => {
                if !self.output_types.is_empty() {
                    let got: Vec<DType> = e.iter().map(|t| t.dtype()).collect();
                    ensure!(
                        got == self.output_types,
                        invalid_argument,
                        "Iterator {}: the element has types {got:?} but the iterator was made for {:?}",
                        self.name,
                        self.output_types
                    );
                }
                if self.output_shapes.len() == e.len() {
                    for (i, (t, want)) in e.iter().zip(&self.output_shapes).enumerate() {
                        ensure!(
                            want.is_compatible_with_shape(t.shape()),
                            invalid_argument,
                            "Incompatible shapes at component {i}: expected {want} but got {}.",
                            PartialShape::from(t.shape())
                        );
                    }
                }
                Ok(e)
            }
            None => Err(Error::out_of_range("End of sequence")),
        }
    }
}

impl Cancellable for IteratorResource {
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
        self.token.lock().cancel();
        // Stop the tree's threads now if no get_next holds it (else that
        // get_next returns CancelledError and the session drops the tree).
        if let Some(mut tree) = self.tree.try_lock() {
            let old = tree.take();
            drop(tree);
            drop(old);
        }
    }
}

/// An iterator registered under its string handle (`IteratorToStringHandle`).
pub(crate) struct NamedIterator(pub Arc<IteratorResource>);

/// The session container string handles are registered in.
pub(crate) const HANDLES: &str = "__ferroflow_iterator_handles";
