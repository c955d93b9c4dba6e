//! `/healthz` and `/readyz` (controller-runtime's `healthz` package): each endpoint runs
//! its named checks, answering `ok` when all pass and a line per check with 500 when one
//! fails (`?verbose` lists them on success too); `/healthz/<name>` and `/readyz/<name>`
//! run one check. Readiness also waits for every running controller to report its cache
//! synced, and fails while that cache is disconnected (a watch failing, the apiserver down
//! or not ready: see [`Cache::connected`]). Custom checks come from [`Manager::add_healthz_check`] and
//! [`Manager::add_readyz_check`]; [`ping`] is controller-runtime's `healthz.Ping`.
//!
//! [`Manager::add_healthz_check`]: crate::Manager::add_healthz_check
//! [`Manager::add_readyz_check`]: crate::Manager::add_readyz_check
//! [`Cache::connected`]: crate::cache::Cache::connected

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

use crate::cache::Cache;
use crate::http::{Body, text};

/// A check's verdict: why it fails, if it does.
pub type CheckResult = Result<(), String>;

/// A check that always passes: the process answers (controller-runtime's `healthz.Ping`).
pub async fn ping() -> CheckResult {
    Ok(())
}

type Checker = Arc<dyn Fn() -> BoxFuture<'static, CheckResult> + Send + Sync>;

#[derive(Clone)]
enum Check {
    /// A running controller: ready once its cache has synced (`Some`), and then while
    /// that cache is connected.
    Controller {
        synced: Option<Cache>,
    },
    Custom(Checker),
}

impl Check {
    async fn run(&self) -> CheckResult {
        match self {
            Check::Controller {
                synced: Some(cache),
            } => cache.connected().await,
            Check::Controller { synced: None } => Err("cache not synced".to_owned()),
            Check::Custom(checker) => checker().await,
        }
    }
}

/// The checks of one endpoint, by name. Clones share them.
#[derive(Clone, Default)]
pub(crate) struct Checks {
    checks: Arc<Mutex<BTreeMap<String, Check>>>,
}

impl Checks {
    /// Adds the check `name`.
    ///
    /// # Panics
    /// When a check of that name exists.
    pub(crate) fn add<F, Fut>(&self, name: &str, check: F)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = CheckResult> + Send + 'static,
    {
        let checker: Checker = Arc::new(move || Box::pin(check()));
        let previous = self.lock().insert(name.to_owned(), Check::Custom(checker));
        assert!(previous.is_none(), "two checks are named {name:?}");
    }

    /// Registers controller `name` as not ready yet and returns the handle that reports
    /// it. Dropping the handle removes the check (the controller stopped).
    pub(crate) fn register_controller(&self, name: &str) -> ReadinessHandle {
        self.lock()
            .insert(name.to_owned(), Check::Controller { synced: None });
        ReadinessHandle {
            checks: self.clone(),
            name: name.to_owned(),
        }
    }

    /// Runs every check (or only `name`), in name order.
    async fn run(&self, name: Option<&str>) -> Option<Vec<(String, CheckResult)>> {
        let checks: Vec<(String, Check)> = {
            let checks = self.lock();
            match name {
                Some(name) => vec![(name.to_owned(), checks.get(name)?.clone())],
                None => checks
                    .iter()
                    .map(|(name, check)| (name.clone(), check.clone()))
                    .collect(),
            }
        };
        let mut results = Vec::with_capacity(checks.len());
        for (name, check) in checks {
            let result = check.run().await;
            results.push((name, result));
        }
        Some(results)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Check>> {
        self.checks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The checks of both endpoints.
#[derive(Clone, Default)]
pub(crate) struct Probes {
    pub(crate) healthz: Checks,
    pub(crate) readyz: Checks,
}

/// Reports one controller's readiness.
pub(crate) struct ReadinessHandle {
    checks: Checks,
    name: String,
}

impl ReadinessHandle {
    /// Marks the controller ready: `cache` has synced, and stays current while connected.
    pub(crate) fn set_ready(&self, cache: &Cache) {
        let check = Check::Controller {
            synced: Some(cache.clone()),
        };
        self.checks.lock().insert(self.name.clone(), check);
    }
}

impl Drop for ReadinessHandle {
    fn drop(&mut self) {
        self.checks.lock().remove(&self.name);
    }
}

/// Answers the probe endpoints.
pub(crate) async fn handle(probes: Probes, request: Request<Incoming>) -> Response<Body> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    }
    let verbose = request.uri().query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| pair == "verbose" || pair.starts_with("verbose="))
    });
    let path = request.uri().path().trim_end_matches('/');
    if path == "/healthz/ping" {
        // Kept from the first versions: always passes.
        return text(StatusCode::OK, "ok");
    }
    let Some((endpoint, checks, name)) = route(&probes, path) else {
        return text(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    let Some(results) = checks.run(name).await else {
        return text(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    if name.is_some() {
        return match &results[0].1 {
            Ok(()) => text(StatusCode::OK, "ok"),
            Err(reason) => text(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("internal server error: {reason}\n"),
            ),
        };
    }
    let passed = results.iter().all(|(_, result)| result.is_ok());
    if passed && !verbose {
        return text(StatusCode::OK, "ok");
    }
    let status = if passed {
        StatusCode::OK
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    text(status, report(endpoint, &results, passed))
}

/// The endpoint of `path`, its checks, and the one check it names, if any.
fn route<'a>(
    probes: &'a Probes,
    path: &'a str,
) -> Option<(&'static str, &'a Checks, Option<&'a str>)> {
    let (endpoint, checks, rest) = if let Some(rest) = path.strip_prefix("/healthz") {
        ("healthz", &probes.healthz, rest)
    } else {
        ("readyz", &probes.readyz, path.strip_prefix("/readyz")?)
    };
    let name = match rest {
        "" => None,
        rest => Some(rest.strip_prefix('/')?),
    };
    Some((endpoint, checks, name))
}

/// One line per check, then the verdict, as controller-runtime's verbose output.
fn report(endpoint: &str, results: &[(String, CheckResult)], passed: bool) -> String {
    let mut report = String::new();
    for (name, result) in results {
        let _ = match result {
            Ok(()) => writeln!(report, "[+]{name} ok"),
            Err(reason) => writeln!(report, "[-]{name} failed: {reason}"),
        };
    }
    let verdict = if passed { "passed" } else { "failed" };
    let _ = writeln!(report, "{endpoint} check {verdict}");
    report
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::cache::ManagedFields;

    /// A cache of namespace `ns` whose apiserver answers every request with `status` and
    /// `body`, or refuses every connection (`None`).
    fn cache_of_apiserver(answer: Option<(u16, &'static str)>) -> Cache {
        let apiserver = tower::service_fn(move |_: Request<kube::client::Body>| async move {
            let (status, body) = answer.ok_or(std::io::Error::other("connection refused"))?;
            let response = Response::builder()
                .status(status)
                .body(kube::client::Body::from(body.as_bytes().to_vec()))
                .unwrap();
            Ok::<_, std::io::Error>(response)
        });
        let client = kube::Client::new(apiserver, "ns");
        Cache::new(client, Arc::from(["ns".to_owned()]), ManagedFields::Dropped)
    }

    async fn summary(checks: &Checks) -> (bool, String) {
        let results = checks.run(None).await.unwrap();
        let passed = results.iter().all(|(_, result)| result.is_ok());
        (passed, report("readyz", &results, passed))
    }

    #[tokio::test]
    async fn ready_once_every_controller_and_check_is() {
        let checks = Checks::default();
        assert!(summary(&checks).await.0, "nothing to wait for");
        let first = checks.register_controller("first");
        let second = checks.register_controller("second");
        assert!(!summary(&checks).await.0);
        let cache = cache_of_apiserver(Some((200, "ok")));
        first.set_ready(&cache);
        assert_eq!(
            summary(&checks).await,
            (
                false,
                "[+]first ok\n[-]second failed: cache not synced\nreadyz check failed\n".into()
            )
        );
        second.set_ready(&cache);
        checks.add("database", || async { Err("unreachable".to_owned()) });
        assert_eq!(
            summary(&checks).await.1,
            "[-]database failed: unreachable\n[+]first ok\n[+]second ok\nreadyz check failed\n"
        );
        drop(first);
        let one = checks.run(Some("second")).await.unwrap();
        assert_eq!(one, [("second".to_owned(), Ok(()))]);
        assert!(
            checks.run(Some("first")).await.is_none(),
            "a stopped controller's check is gone"
        );
    }

    #[tokio::test]
    async fn a_synced_controller_is_not_ready_while_its_cache_is_disconnected() {
        let etcd_down = "[+]ping ok\n[-]etcd failed: reason withheld\nreadyz check failed\n";
        assert_eq!(
            cache_of_apiserver(Some((500, etcd_down))).connected().await,
            Err("the apiserver is not ready (500 Internal Server Error): \
                 [-]etcd failed: reason withheld"
                .to_owned())
        );
        assert_eq!(
            cache_of_apiserver(Some((403, ""))).connected().await,
            Ok(()),
            "a refusal proves that the apiserver answers"
        );

        let checks = Checks::default();
        let controller = checks.register_controller("cronjob");
        let cache = cache_of_apiserver(None);
        controller.set_ready(&cache);
        // A watch that cannot connect: its first list fails at once.
        let _ = cache.kind::<ConfigMap>().store(&cache, Some("ns"));
        let mut report = String::new();
        for _ in 0..100 {
            report = summary(&checks).await.1;
            if report.contains("the watch of") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(
            report.starts_with("[-]cronjob failed: the watch of ConfigMap in \"ns\" is failing: "),
            "{report}"
        );
        assert!(
            report.contains("; the apiserver is unreachable: "),
            "{report}"
        );
    }
}
