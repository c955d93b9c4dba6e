//! `/healthz` and `/readyz`: liveness answers as long as the process serves requests;
//! readiness waits for every running controller to report its cache synced.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

use crate::http::{Body, text};

/// The readiness checks of a manager. A manager with no check registered is ready: a
/// replica waiting for the leader lease runs no controller and is ready to take over.
#[derive(Clone, Debug, Default)]
pub(crate) struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, bool>>>,
}

impl Readiness {
    /// Registers the check `name` as not ready yet and returns the handle that reports it.
    /// Dropping the handle removes the check (the controller stopped).
    pub(crate) fn register(&self, name: &str) -> ReadinessHandle {
        self.lock().insert(name.to_owned(), false);
        ReadinessHandle {
            readiness: self.clone(),
            name: name.to_owned(),
        }
    }

    /// Each check's state, one line each, as controller-runtime's verbose healthz output.
    fn report(&self) -> (bool, String) {
        let checks = self.lock();
        let mut report = String::new();
        for (name, ready) in checks.iter() {
            let _ = if *ready {
                writeln!(report, "[+]{name} ok")
            } else {
                writeln!(report, "[-]{name} failed: cache not synced")
            };
        }
        let ready = checks.values().all(|ready| *ready);
        report.push_str(if ready {
            "readyz check passed\n"
        } else {
            "readyz check failed\n"
        });
        (ready, report)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, bool>> {
        self.checks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Reports one controller's readiness.
#[derive(Debug)]
pub(crate) struct ReadinessHandle {
    readiness: Readiness,
    name: String,
}

impl ReadinessHandle {
    /// Marks the check ready (the controller's cache has synced).
    pub(crate) fn set_ready(&self) {
        self.readiness.lock().insert(self.name.clone(), true);
    }
}

impl Drop for ReadinessHandle {
    fn drop(&mut self) {
        self.readiness.lock().remove(&self.name);
    }
}

/// Answers the probe endpoints.
pub(crate) async fn handle(readiness: Readiness, request: Request<Incoming>) -> Response<Body> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    }
    match request.uri().path() {
        "/healthz" | "/healthz/" | "/healthz/ping" => text(StatusCode::OK, "ok"),
        "/readyz" | "/readyz/" => {
            let (ready, report) = readiness.report();
            let status = if ready {
                StatusCode::OK
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            };
            text(status, report)
        }
        _ => text(StatusCode::NOT_FOUND, "404 page not found\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_once_every_registered_check_is() {
        let readiness = Readiness::default();
        assert!(readiness.report().0, "nothing to wait for");
        let first = readiness.register("first");
        let second = readiness.register("second");
        assert!(!readiness.report().0);
        first.set_ready();
        assert!(!readiness.report().0);
        let (_, report) = readiness.report();
        assert_eq!(
            report,
            "[+]first ok\n[-]second failed: cache not synced\nreadyz check failed\n"
        );
        second.set_ready();
        assert!(readiness.report().0);
        drop(first);
        let (ready, report) = readiness.report();
        assert!(ready);
        assert_eq!(report, "[+]second ok\nreadyz check passed\n");
    }
}
