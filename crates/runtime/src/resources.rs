//! Per-session state: variables and the state of stateful ops.

use crate::blocking::Cancellable;
use ferroflow_graph::NodeId;
use ferroflow_tensor::{DType, Error, Result, Shape, Tensor};
use parking_lot::{Mutex, RwLock, RwLockWriteGuard};
use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// A variable's storage in one session.
///
/// Readers get a cheap handle to the current buffer; writers update it in
/// place when no reader still holds it (copy-on-write).
pub struct Variable {
    name: String,
    dtype: DType,
    /// The declared shape, if fully known (`Assign` validates against it).
    declared: Option<Shape>,
    value: RwLock<Option<Tensor>>,
}

impl Variable {
    pub fn new(name: &str, dtype: DType, declared: Option<Shape>) -> Variable {
        Variable {
            name: name.to_string(),
            dtype,
            declared,
            value: RwLock::new(None),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn declared_shape(&self) -> Option<&Shape> {
        self.declared.as_ref()
    }

    /// The current value (a shared handle, no copy), or TensorFlow's
    /// `FailedPrecondition` if the variable was never assigned.
    pub fn read(&self) -> Result<Tensor> {
        self.value
            .read()
            .clone()
            .ok_or_else(|| self.uninitialized())
    }

    pub fn is_initialized(&self) -> bool {
        self.value.read().is_some()
    }

    /// Replaces the value.
    pub fn set(&self, t: Tensor) {
        *self.value.write() = Some(t);
    }

    /// Exclusive access for in-place updates.
    pub fn lock(&self) -> RwLockWriteGuard<'_, Option<Tensor>> {
        self.value.write()
    }

    /// Exclusive access to an initialized value.
    pub fn update<R>(&self, f: impl FnOnce(&mut Tensor) -> Result<R>) -> Result<R> {
        let mut guard = self.value.write();
        match guard.as_mut() {
            Some(t) => f(t),
            None => Err(self.uninitialized()),
        }
    }

    pub fn uninitialized(&self) -> Error {
        Error::failed_precondition(format!(
            "Attempting to use uninitialized value {}",
            self.name
        ))
    }
}

/// State owned by one session: variables, random generators, queues...,
/// keyed by the node that owns them.
#[derive(Default)]
pub struct SessionState {
    resources: Mutex<HashMap<NodeId, Arc<dyn Any + Send + Sync>>>,
    /// Resources shared by name (`shared_name`, `container`) rather than
    /// owned by one node: TF's resource manager.
    shared: Mutex<HashMap<(String, String), Arc<dyn Any + Send + Sync>>>,
    /// Resources to wake when the session closes (see [`crate::blocking`]).
    cancellables: Mutex<Vec<Weak<dyn Cancellable>>>,
}

impl SessionState {
    /// The resource of `node`, created by `make` on first use.
    pub fn get_or_create<T: Any + Send + Sync>(
        &self,
        node: NodeId,
        make: impl FnOnce() -> T,
    ) -> Result<Arc<T>> {
        let mut map = self.resources.lock();
        let entry = map.entry(node).or_insert_with(|| Arc::new(make()));
        entry
            .clone()
            .downcast::<T>()
            .map_err(|_| Error::internal(format!("resource of node {node} has another type")))
    }

    /// The resource of `node`, if it exists and has type `T`.
    pub fn get<T: Any + Send + Sync>(&self, node: NodeId) -> Option<Arc<T>> {
        self.resources
            .lock()
            .get(&node)
            .cloned()
            .and_then(|r| r.downcast::<T>().ok())
    }

    /// The resource shared as `name` in `container` (TF's `shared_name` and
    /// `container` attributes), created by `make` on first use. A resource
    /// of another type under the same name is an `InvalidArgument` error.
    pub fn get_or_create_shared<T: Any + Send + Sync>(
        &self,
        container: &str,
        name: &str,
        make: impl FnOnce() -> Result<T>,
    ) -> Result<Arc<T>> {
        let mut map = self.shared.lock();
        let key = (container.to_string(), name.to_string());
        let entry = match map.get(&key) {
            Some(r) => r.clone(),
            None => {
                let r: Arc<dyn Any + Send + Sync> = Arc::new(make()?);
                map.insert(key, r.clone());
                r
            }
        };
        entry.downcast::<T>().map_err(|_| {
            Error::invalid_argument(format!(
                "the resource shared as '{name}' in container '{container}' has another type"
            ))
        })
    }

    /// Makes `Session.close` wake `resource`'s waiters (see
    /// [`Cancellable`]). The session holds it weakly.
    pub fn register_cancellable(&self, resource: Weak<dyn Cancellable>) {
        let mut list = self.cancellables.lock();
        list.retain(|w| w.strong_count() > 0);
        list.push(resource);
    }

    /// Wakes every waiting kernel with `CancelledError` (the first half of
    /// `Session.close`).
    pub fn cancel_all(&self) {
        let list = std::mem::take(&mut *self.cancellables.lock());
        for r in list.iter().filter_map(Weak::upgrade) {
            r.cancel();
        }
    }

    /// Cancels every waiter, then drops every resource (on `Session.close`).
    pub fn clear(&self) {
        self.cancel_all();
        self.resources.lock().clear();
        self.shared.lock().clear();
    }
}
