//! Leader election on a coordination.k8s.io Lease with kube-lease-manager: the work runs
//! only while this replica holds the lease, stops when the lease is lost, and the lease
//! is released on shutdown.
//!
//! kube-lease-manager's candidate sleeps until the holder's lease would expire; a holder
//! that releases the lease on shutdown would still leave its successor waiting for that
//! long. So candidates also watch the Lease and start over the moment its holder is
//! cleared: the successor takes over at once.

use std::future::Future;
use std::hash::{BuildHasher as _, Hasher as _};
use std::pin::pin;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use kube::runtime::{WatchStreamExt as _, watcher};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// How long to wait before retrying after the apiserver refused a lease operation.
const RETRY_DELAY: Duration = Duration::from_secs(1);

/// Where the lease lives and how long it lasts.
#[derive(Clone, Debug)]
pub(crate) struct LeaseSettings {
    pub(crate) name: String,
    pub(crate) namespace: String,
    pub(crate) identity: String,
    /// How long a lease is valid after its last renewal.
    pub(crate) duration_seconds: u64,
    /// How long before expiry the holder renews (kube-lease-manager's "grace").
    pub(crate) renew_before_expiry_seconds: u64,
}

/// Why the election ended other than by shutdown.
#[derive(Debug, thiserror::Error)]
#[error("the controllers stopped by themselves while leading")]
pub(crate) struct WorkEnded;

/// Campaigns for the lease until `shutdown`; each time it is acquired, runs
/// `lead(stop)` and cancels `stop` when the lease is lost or at shutdown. The work's end
/// is awaited (in-flight reconciles finish) while the lease keeps being renewed; then
/// the lease is released at shutdown.
pub(crate) async fn campaign<F, Fut>(
    client: kube::Client,
    settings: LeaseSettings,
    metrics: Metrics,
    leading: watch::Sender<bool>,
    shutdown: CancellationToken,
    mut lead: F,
) -> Result<(), WorkEnded>
where
    F: FnMut(CancellationToken) -> Fut,
    Fut: Future<Output = ()>,
{
    let leases: Api<Lease> = Api::namespaced(client.clone(), &settings.namespace);
    metrics.set_leader(&settings.name, false);
    loop {
        let lease = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            built = lease_manager(&client, &settings) => match built {
                Ok(lease) => lease,
                Err(err) => {
                    tracing::warn!(lease = %settings.name, error = %err, "cannot read the leader-election lease");
                    pause(&shutdown).await;
                    continue;
                }
            },
        };
        tracing::info!(lease = %settings.name, namespace = %settings.namespace, identity = %settings.identity, "attempting to acquire leader lease");
        let acquired = tokio::select! {
            () = shutdown.cancelled() => {
                // The lock may have been taken just as the shutdown came; releasing is a
                // no-op when someone else holds the lease.
                if let Err(err) = lease.release().await {
                    tracing::debug!(lease = %settings.name, error = %err, "releasing as a candidate");
                }
                return Ok(());
            }
            () = released_by_holder(leases.clone(), &settings.name) => continue,
            changed = lease.changed() => changed,
        };
        match acquired {
            Ok(true) => {}
            Ok(false) => continue,
            Err(err) => {
                tracing::warn!(lease = %settings.name, error = %err, "cannot acquire the leader lease");
                pause(&shutdown).await;
                continue;
            }
        }

        tracing::info!(lease = %settings.name, identity = %settings.identity, "successfully acquired lease");
        metrics.set_leader(&settings.name, true);
        leading.send_replace(true);
        let stop = CancellationToken::new();
        let mut work = pin!(lead(stop.clone()));
        let mut holding = true;
        let ended_by_itself = tokio::select! {
            () = &mut work => true,
            () = shutdown.cancelled() => false,
            changed = lease.changed() => {
                report_loss(&settings.name, &metrics, changed);
                holding = false;
                false
            }
        };
        stop.cancel();
        // Keep renewing while the reconciles in flight finish, so that no successor runs
        // them a second time meanwhile.
        if !ended_by_itself {
            loop {
                tokio::select! {
                    () = &mut work => break,
                    changed = lease.changed(), if holding => {
                        report_loss(&settings.name, &metrics, changed);
                        holding = false;
                    }
                }
            }
        }
        metrics.set_leader(&settings.name, false);
        leading.send_replace(false);
        if ended_by_itself || shutdown.is_cancelled() {
            if holding {
                release(&lease, &settings.name).await;
            }
            return if ended_by_itself {
                Err(WorkEnded)
            } else {
                Ok(())
            };
        }
    }
}

async fn lease_manager(
    client: &kube::Client,
    settings: &LeaseSettings,
) -> kube_lease_manager::Result<LeaseManager> {
    LeaseManagerBuilder::new(client.clone(), &settings.name)
        .with_namespace(&settings.namespace)
        .with_identity(&settings.identity)
        .with_duration(settings.duration_seconds)
        .with_grace(settings.renew_before_expiry_seconds)
        .build()
        .await
}

fn report_loss(lease: &str, metrics: &Metrics, changed: kube_lease_manager::Result<bool>) {
    metrics.set_leader(lease, false);
    match changed {
        Ok(_) => tracing::warn!(%lease, "leader lease lost; stopping the controllers"),
        // Renewal cannot be confirmed: act as if lost rather than risk two leaders.
        Err(err) => {
            tracing::warn!(%lease, error = %err, "cannot renew the leader lease; stopping the controllers")
        }
    }
}

async fn release(lease: &LeaseManager, name: &str) {
    match lease.release().await {
        Ok(()) => tracing::info!(lease = %name, "leader lease released"),
        Err(err) => {
            tracing::warn!(lease = %name, error = %err, "cannot release the leader lease; it expires by itself")
        }
    }
}

/// Resolves when the Lease's holder goes from someone to no one.
async fn released_by_holder(leases: Api<Lease>, name: &str) {
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut updates = pin!(watcher(leases, config).default_backoff().applied_objects());
    let mut previous_holder = None;
    while let Some(update) = updates.next().await {
        match update {
            Ok(lease) => {
                let holder = lease.spec.and_then(|spec| spec.holder_identity);
                if previous_holder.is_some() && holder.is_none() {
                    return;
                }
                previous_holder = holder;
            }
            Err(err) => tracing::debug!(error = %err, "watching the leader lease"),
        }
    }
    std::future::pending().await
}

async fn pause(shutdown: &CancellationToken) {
    tokio::select! {
        () = shutdown.cancelled() => {}
        () = tokio::time::sleep(RETRY_DELAY) => {}
    }
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
    // RandomState is seeded from the OS's randomness per process and per instance.
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("{host}_{random:016x}")
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
}
