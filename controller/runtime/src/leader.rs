//! Leader election on a coordination.k8s.io Lease, as client-go's `leaderelection` does it,
//! with fencing: the controllers run only while this replica holds the lease, and their
//! writes are refused the moment it can no longer prove it does.
//!
//! - A candidate reads the Lease every retry period and takes it when it is free, released,
//!   or unchanged for a whole lease duration *as this replica observed it* (its own
//!   clock, never the holder's timestamps: clocks may disagree). It also watches the Lease,
//!   so a released lease is taken at once rather than after the next retry.
//! - Every write of the Lease is an update conditional on the resourceVersion just read, so
//!   two candidates can never both succeed, and a holder that lost the lease cannot
//!   overwrite its successor's record (an unconditional patch could, once).
//! - The holder is proven leader until `renew deadline` after it *sent* its last successful
//!   renewal. Others wait a full lease duration (longer) from when *they* saw that renewal,
//!   so the proof ends before anyone else can take over. Once it has ended (renewals
//!   refused or failing, or the process was paused past it), the [`Fence`] refuses every
//!   write of the controllers, and the controllers are stopped without another lease write.

use std::future::Future;
use std::hash::{BuildHasher as _, Hasher as _};
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use http::Method;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ObjectMeta, PostParams};
use kube::runtime::{WatchStreamExt as _, watcher};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// Where the lease lives, whose it is to take, and its timing.
#[derive(Clone, Debug)]
pub(crate) struct LeaseSettings {
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) identity: String,
    pub(crate) timing: LeaseTiming,
}

/// client-go's three durations (controller-runtime's `LeaseDuration`, `RenewDeadline`,
/// `RetryPeriod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeaseTiming {
    /// How long candidates wait, from when they last saw the lease change, before taking it.
    pub(crate) lease_duration: Duration,
    /// How long the holder stays leader after sending its last successful renewal.
    pub(crate) renew_deadline: Duration,
    /// How often the holder renews, and candidates try.
    pub(crate) retry_period: Duration,
}

impl LeaseTiming {
    /// Why the timing cannot work, if it cannot: the holder must step down before anyone
    /// may take over, and have time for more than one renewal attempt before that.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.lease_duration.as_secs() == 0 || self.lease_duration.subsec_nanos() != 0 {
            return Err(format!(
                "the lease duration must be whole seconds, at least one (Lease objects count seconds), not {:?}",
                self.lease_duration
            ));
        }
        if self.renew_deadline >= self.lease_duration {
            return Err(format!(
                "the renew deadline ({:?}) must be shorter than the lease duration ({:?}): the leader must step down before another replica may take over",
                self.renew_deadline, self.lease_duration
            ));
        }
        if self.retry_period.is_zero() || self.retry_period.mul_f64(JITTER) >= self.renew_deadline {
            return Err(format!(
                "the retry period ({:?}, jittered up to {JITTER}×) must be above zero and shorter than the renew deadline ({:?})",
                self.retry_period, self.renew_deadline
            ));
        }
        Ok(())
    }
}

/// client-go's jitter factor for candidates' retries: up to 1.2 × the retry period, so
/// replicas started together do not keep asking in the same instant.
const JITTER: f64 = 1.2;

/// Whether the controllers may write: open while this replica can prove it leads.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fence {
    /// Until when leadership is proven; `None` while not leading.
    valid_until: Arc<Mutex<Option<Instant>>>,
}

impl Fence {
    fn open_until(&self, until: Instant) {
        *self.lock() = Some(until);
    }

    fn close(&self) {
        *self.lock() = None;
    }

    fn is_open(&self) -> bool {
        self.lock().is_some_and(|until| Instant::now() < until)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.valid_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `client` with every write (anything but GET, HEAD and OPTIONS: watches are GETs)
    /// refused while the fence is closed, before it is sent.
    pub(crate) fn guard(&self, client: kube::Client) -> kube::Client {
        let fence = self.clone();
        crate::rest_client::wrap(client, move |client, request| {
            let refused = !READS.contains(request.method()) && !fence.is_open();
            async move {
                if refused {
                    tracing::warn!(method = %request.method(), uri = %request.uri(), "write refused: not the leader");
                    return Err(kube::Error::Service(Box::new(NotLeader)));
                }
                client.send(request).await
            }
        })
    }
}

/// The methods that change nothing (watches are GETs).
const READS: [Method; 3] = [Method::GET, Method::HEAD, Method::OPTIONS];

/// Why a write of the controllers was refused.
#[derive(Debug, thiserror::Error)]
#[error("not sent: this replica cannot prove it still holds the leader lease")]
pub struct NotLeader;

/// Why the election ended other than by shutdown.
#[derive(Debug, thiserror::Error)]
#[error("the controllers stopped by themselves while leading")]
pub(crate) struct WorkEnded;

/// Why a term as leader ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    ByItself,
    Shutdown,
    LeaseLost,
}

/// What the election shares with the manager.
pub(crate) struct Campaign {
    pub(crate) client: kube::Client,
    pub(crate) settings: LeaseSettings,
    pub(crate) metrics: Metrics,
    pub(crate) fence: Fence,
    pub(crate) leading: watch::Sender<bool>,
    pub(crate) shutdown: CancellationToken,
}

impl Campaign {
    /// Campaigns for the lease until shutdown; each time it is acquired, runs `lead(stop)`
    /// and cancels `stop` when leadership can no longer be proven, or at shutdown. The
    /// work's end is awaited (in-flight reconciles finish; their writes are fenced once
    /// leadership is lost) while the lease keeps being renewed; at shutdown the lease is
    /// released.
    pub(crate) async fn run<F, Fut>(self, mut lead: F) -> Result<(), WorkEnded>
    where
        F: FnMut(CancellationToken) -> Fut,
        Fut: Future<Output = ()>,
    {
        let name = &self.settings.name;
        let mut lease = LeaseLock::new(&self.client, &self.settings);
        self.metrics.set_leader(name, false);
        loop {
            tracing::info!(lease = %name, namespace = %self.settings.namespace, identity = %self.settings.identity, "attempting to acquire leader lease");
            if !self.acquire(&mut lease).await {
                return Ok(());
            }
            tracing::info!(lease = %name, identity = %self.settings.identity, "successfully acquired lease");
            self.set_leading(true);
            let stop = CancellationToken::new();
            let mut work = pin!(lead(stop.clone()));
            let ended = tokio::select! {
                () = &mut work => Ended::ByItself,
                () = self.shutdown.cancelled() => Ended::Shutdown,
                () = self.hold(&mut lease) => Ended::LeaseLost,
            };
            stop.cancel();
            let mut holding = ended != Ended::LeaseLost;
            if ended == Ended::Shutdown {
                // Keep renewing while the reconciles in flight finish, so that no successor
                // runs them a second time meanwhile.
                tokio::select! {
                    () = &mut work => {}
                    () = self.hold(&mut lease) => { holding = false; work.await; }
                }
            } else if ended == Ended::LeaseLost {
                work.await;
            }
            self.fence.close();
            self.set_leading(false);
            if ended == Ended::LeaseLost && !self.shutdown.is_cancelled() {
                continue;
            }
            if holding {
                lease.release(&self.settings).await;
            }
            return if ended == Ended::ByItself {
                Err(WorkEnded)
            } else {
                Ok(())
            };
        }
    }

    fn set_leading(&self, leading: bool) {
        self.metrics.set_leader(&self.settings.name, leading);
        self.leading.send_replace(leading);
    }

    /// Tries every (jittered) retry period until acquired (true) or shutdown (false). The
    /// Lease is watched meanwhile, so that every renewal is observed when it happens and the
    /// next try comes the moment the lease expires (or is released), not up to a retry
    /// period later: takeover after a crash takes the lease duration, plus a request.
    async fn acquire(&self, lease: &mut LeaseLock) -> bool {
        let config =
            watcher::Config::default().fields(&format!("metadata.name={}", self.settings.name));
        let mut updates = pin!(
            watcher(lease.api.clone(), config)
                .default_backoff()
                .applied_objects()
        );
        loop {
            match lease.try_acquire_or_renew(&self.settings).await {
                Ok(Some(sent_at)) => {
                    self.fence
                        .open_until(sent_at + self.settings.timing.renew_deadline);
                    return true;
                }
                Ok(None) => {}
                Err(err) => {
                    tracing::warn!(lease = %self.settings.name, error = %err, "cannot acquire the leader lease")
                }
            }
            let retry = Instant::now() + jittered(self.settings.timing.retry_period);
            loop {
                let next_try = lease.expires_at().map_or(retry, |expiry| expiry.min(retry));
                tokio::select! {
                    () = self.shutdown.cancelled() => return false,
                    () = tokio::time::sleep_until(next_try.into()) => break,
                    update = updates.next() => match update {
                        Some(Ok(seen)) if lease.observe(&seen) => break,
                        Some(Ok(_)) => {}
                        Some(Err(err)) => tracing::debug!(error = %err, "watching the leader lease"),
                        None => return false,
                    },
                }
            }
        }
    }

    /// Renews every retry period while leadership is proven; returns once it is not (the
    /// fence is closed by then, so nothing more is written).
    async fn hold(&self, lease: &mut LeaseLock) {
        let timing = self.settings.timing;
        loop {
            tokio::time::sleep(timing.retry_period).await;
            // Checked before anything else after waking: a process paused past its deadline
            // (SIGSTOP, a frozen VM) must not write again, not even to the lease.
            if !self.fence.is_open() {
                tracing::warn!(lease = %self.settings.name, "leadership not renewed within the renew deadline; stopping the controllers");
                break;
            }
            match lease.try_acquire_or_renew(&self.settings).await {
                Ok(Some(sent_at)) => self.fence.open_until(sent_at + timing.renew_deadline),
                Ok(None) => {
                    tracing::warn!(lease = %self.settings.name, "leader lease lost; stopping the controllers");
                    break;
                }
                // Transient: retried until the deadline passes.
                Err(err) => {
                    tracing::warn!(lease = %self.settings.name, error = %err, "cannot renew the leader lease")
                }
            }
        }
        self.fence.close();
        self.metrics.set_leader(&self.settings.name, false);
    }
}

/// The Lease as this replica last observed it.
struct LeaseLock {
    api: Api<Lease>,
    /// The last record seen (its resourceVersion and spec), and when this replica saw it
    /// change.
    observed: Option<(String, LeaseSpec, Instant)>,
}

impl LeaseLock {
    fn new(client: &kube::Client, settings: &LeaseSettings) -> Self {
        Self {
            api: Api::namespaced(client.clone(), &settings.namespace),
            observed: None,
        }
    }

    /// client-go's `tryAcquireOrRenew`: takes or renews the lease when it is ours, free,
    /// or expired as observed here. `Some(instant the winning write was sent)`, or `None`
    /// when someone else holds it (or won the race to it).
    async fn try_acquire_or_renew(
        &mut self,
        settings: &LeaseSettings,
    ) -> Result<Option<Instant>, kube::Error> {
        let Some(current) = self.api.get_opt(&settings.name).await? else {
            return self.create(settings).await;
        };
        self.observe(&current);
        let spec = current.spec.clone().unwrap_or_default();
        let ours = holder(&spec) == Some(settings.identity.as_str());
        let expired = self
            .expires_at()
            .is_none_or(|expiry| Instant::now() >= expiry);
        if !ours && !expired {
            return Ok(None);
        }
        let mut next = current;
        next.spec = Some(renewed(spec, settings, ours));
        let sent_at = Instant::now();
        // `replace` sends the resourceVersion read above: refused if anyone wrote since.
        match self
            .api
            .replace(&settings.name, &PostParams::default(), &next)
            .await
        {
            Ok(written) => {
                self.remember(&written);
                Ok(Some(sent_at))
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
            Err(err) => Err(err),
        }
    }

    async fn create(&mut self, settings: &LeaseSettings) -> Result<Option<Instant>, kube::Error> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(settings.name.clone()),
                namespace: Some(settings.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(renewed(LeaseSpec::default(), settings, false)),
        };
        let sent_at = Instant::now();
        match self.api.create(&PostParams::default(), &lease).await {
            Ok(written) => {
                self.remember(&written);
                Ok(Some(sent_at))
            }
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Records `current` as seen now if it changed since last seen; true when it shows the
    /// lease free (released, or never held), worth trying for at once.
    fn observe(&mut self, current: &Lease) -> bool {
        let resource_version = current
            .metadata
            .resource_version
            .as_deref()
            .unwrap_or_default();
        let changed = !matches!(&self.observed, Some((seen, _, _)) if seen == resource_version);
        if changed {
            let spec = current.spec.clone().unwrap_or_default();
            self.observed = Some((resource_version.to_owned(), spec, Instant::now()));
        }
        self.observed
            .as_ref()
            .is_some_and(|(_, spec, _)| holder(spec).is_none())
    }

    /// When the lease last observed runs out, by its own duration, as seen from here.
    fn expires_at(&self) -> Option<Instant> {
        let (_, spec, observed_at) = self.observed.as_ref()?;
        holder(spec)?;
        Some(*observed_at + record_duration(spec))
    }

    fn remember(&mut self, written: &Lease) {
        self.observed = Some((
            written
                .metadata
                .resource_version
                .clone()
                .unwrap_or_default(),
            written.spec.clone().unwrap_or_default(),
            Instant::now(),
        ));
    }

    /// Clears the holder so that a candidate takes over at once; only if the lease is still
    /// ours (the update is conditional on the record last written).
    async fn release(&mut self, settings: &LeaseSettings) {
        let Some((resource_version, spec, _)) = self.observed.clone() else {
            return;
        };
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(settings.name.clone()),
                namespace: Some(settings.namespace.clone()),
                resource_version: Some(resource_version),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: None,
                lease_duration_seconds: Some(1),
                renew_time: Some(MicroTime(Timestamp::now())),
                ..spec
            }),
        };
        match self
            .api
            .replace(&settings.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => tracing::info!(lease = %settings.name, "leader lease released"),
            Err(err) => {
                tracing::warn!(lease = %settings.name, error = %err, "cannot release the leader lease; it expires by itself")
            }
        }
    }
}

/// Who holds the lease, if anyone.
fn holder(spec: &LeaseSpec) -> Option<&str> {
    spec.holder_identity
        .as_deref()
        .filter(|holder| !holder.is_empty())
}

/// How long a record lasts after it was written, by its own `leaseDurationSeconds`.
fn record_duration(spec: &LeaseSpec) -> Duration {
    let seconds = spec.lease_duration_seconds.unwrap_or(0).max(0);
    Duration::from_secs(u64::try_from(seconds).unwrap_or(0))
}

/// The record this replica writes: renewed now, and acquired now unless it already held it.
fn renewed(previous: LeaseSpec, settings: &LeaseSettings, ours: bool) -> LeaseSpec {
    let now = MicroTime(Timestamp::now());
    let duration_seconds = settings.timing.lease_duration.as_secs();
    LeaseSpec {
        holder_identity: Some(settings.identity.clone()),
        lease_duration_seconds: Some(i32::try_from(duration_seconds).unwrap_or(i32::MAX)),
        acquire_time: if ours {
            previous.acquire_time.clone()
        } else {
            Some(now.clone())
        },
        renew_time: Some(now),
        lease_transitions: if ours {
            previous.lease_transitions
        } else {
            Some(
                previous.lease_transitions.unwrap_or(0)
                    + i32::from(previous.holder_identity.is_some()),
            )
        },
        ..previous
    }
}

/// `period` stretched by a random factor in [1, JITTER).
fn jittered(period: Duration) -> Duration {
    let random = random_u64() as f64 / u64::MAX as f64;
    period.mul_f64(1.0 + (JITTER - 1.0) * random)
}

/// A random number: RandomState is seeded from the OS's randomness per process and per
/// instance.
fn random_u64() -> u64 {
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// A holder identity as client-go makes it: the host name plus a random suffix, so two
/// managers on one host (or a restarted pod) never share one.
pub(crate) fn identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .filter(|host| !host.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|host| host.trim().to_owned())
        })
        .filter(|host| !host.is_empty())
        .unwrap_or_else(|| "manager".to_owned());
    format!("{host}_{:016x}", random_u64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_are_unique_per_call() {
        let first = identity();
        let second = identity();
        assert_ne!(first, second);
        assert!(first.contains('_'), "{first}");
    }

    fn timing(lease: u64, renew: u64, retry: u64) -> LeaseTiming {
        LeaseTiming {
            lease_duration: Duration::from_secs(lease),
            renew_deadline: Duration::from_secs(renew),
            retry_period: Duration::from_secs(retry),
        }
    }

    #[test]
    fn timing_must_let_the_leader_step_down_before_a_takeover() {
        assert_eq!(timing(15, 10, 2).check(), Ok(()));
        assert!(
            timing(10, 10, 2)
                .check()
                .unwrap_err()
                .contains("renew deadline")
        );
        assert!(
            timing(15, 10, 9)
                .check()
                .unwrap_err()
                .contains("retry period")
        );
        assert!(
            timing(15, 10, 0)
                .check()
                .unwrap_err()
                .contains("retry period")
        );
        assert!(
            timing(0, 0, 0)
                .check()
                .unwrap_err()
                .contains("whole seconds")
        );
        let fractional = LeaseTiming {
            lease_duration: Duration::from_millis(1500),
            ..timing(15, 1, 0)
        };
        assert!(fractional.check().unwrap_err().contains("whole seconds"));
    }

    #[test]
    fn the_fence_opens_until_its_deadline_only() {
        let fence = Fence::default();
        assert!(!fence.is_open(), "closed until leadership is proven");
        fence.open_until(Instant::now() + Duration::from_secs(60));
        assert!(fence.is_open());
        fence.open_until(Instant::now());
        assert!(!fence.is_open(), "closed once the deadline has passed");
        fence.open_until(Instant::now() + Duration::from_secs(60));
        fence.close();
        assert!(!fence.is_open());
    }

    fn lease(resource_version: &str, holder: Option<&str>) -> Lease {
        Lease {
            metadata: ObjectMeta {
                resource_version: Some(resource_version.into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: holder.map(Into::into),
                lease_duration_seconds: Some(15),
                ..LeaseSpec::default()
            }),
        }
    }

    #[tokio::test]
    async fn a_record_expires_a_lease_duration_after_it_was_first_seen() {
        let client = kube::Client::new(
            tower::service_fn(|_| async {
                Err::<http::Response<kube::client::Body>, _>(std::io::Error::other("no apiserver"))
            }),
            "default",
        );
        let mut lock = LeaseLock {
            api: Api::namespaced(client, "default"),
            observed: None,
        };
        assert_eq!(lock.expires_at(), None, "nothing seen: free to try");
        let before = Instant::now();
        assert!(!lock.observe(&lease("1", Some("them"))), "held");
        let expiry = lock.expires_at().unwrap();
        assert!(expiry >= before + Duration::from_secs(15));
        assert!(!lock.observe(&lease("1", Some("them"))));
        assert_eq!(
            lock.expires_at(),
            Some(expiry),
            "the same record does not push the expiry"
        );
        assert!(lock.observe(&lease("2", None)), "released: try at once");
        assert_eq!(lock.expires_at(), None);
    }

    #[test]
    fn taking_over_counts_a_transition_and_renewing_keeps_the_acquire_time() {
        let settings = LeaseSettings {
            name: "lease".into(),
            namespace: "default".into(),
            identity: "me".into(),
            timing: timing(15, 10, 2),
        };
        let theirs = LeaseSpec {
            holder_identity: Some("them".into()),
            acquire_time: Some(MicroTime(Timestamp::UNIX_EPOCH)),
            lease_transitions: Some(3),
            ..LeaseSpec::default()
        };
        let taken = renewed(theirs, &settings, false);
        assert_eq!(taken.holder_identity.as_deref(), Some("me"));
        assert_eq!(taken.lease_transitions, Some(4));
        assert_eq!(taken.lease_duration_seconds, Some(15));
        let kept = renewed(taken.clone(), &settings, true);
        assert_eq!(kept.acquire_time, taken.acquire_time);
        assert_eq!(kept.lease_transitions, Some(4));
        let first = renewed(LeaseSpec::default(), &settings, false);
        assert_eq!(first.lease_transitions, Some(0));
    }
}
