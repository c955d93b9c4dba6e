//! client-go's workqueue metrics, as controller-runtime exposes them for each controller
//! (label `name`: the controller's name).
//!
//! kube-runtime's `Controller` keeps its queue to itself, so the queue is observed from
//! outside, where objects enter and leave it: an object is *added* when a watch event
//! triggers it, or when a reconcile asks to run it again (after a delay, or after a
//! failure: a *retry*); it leaves the queue when its reconcile starts. As in client-go,
//! an object already waiting is not added twice (the earlier time wins), and one added
//! with a delay counts in the depth only once the delay is over. kube-runtime's `Action`
//! does not tell its delay: an object a reconcile asked to requeue is counted as added,
//! but not in the depth nor the queue duration until an event or a retry makes it due.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric as _};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::{NameLabels, lock};

/// client-go's buckets for the queue and work durations: 10 ns to 1000 s.
fn duration_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-9, 10.0, 12))
}

/// The registered workqueue families, and every queue (for the gauges computed at
/// each scrape).
#[derive(Clone)]
pub(super) struct Families {
    adds: Family<NameLabels, Counter>,
    retries: Family<NameLabels, Counter>,
    queue_duration: Family<NameLabels, Histogram, fn() -> Histogram>,
    work_duration: Family<NameLabels, Histogram, fn() -> Histogram>,
    queues: Arc<Mutex<BTreeMap<String, Workqueue>>>,
}

impl Families {
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = Self {
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            queues: Arc::default(),
        };
        registry.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            families.adds.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            families.retries.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            families.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            families.work_duration.clone(),
        );
        families
    }

    /// The queue of controller `name`, emptied: a controller starting again (a new
    /// leadership term) starts with an empty queue.
    pub(super) fn queue(&self, name: &str) -> Workqueue {
        let labels = NameLabels {
            name: name.to_owned(),
        };
        let queue = Workqueue {
            name: name.to_owned(),
            state: Arc::default(),
            adds: self.adds.get_or_create_owned(&labels),
            retries: self.retries.get_or_create_owned(&labels),
            queue_duration: self.queue_duration.get_or_create_owned(&labels),
            work_duration: self.work_duration.get_or_create_owned(&labels),
        };
        lock(&self.queues).insert(name.to_owned(), queue.clone());
        queue
    }

    /// Encodes the gauges of every queue as of now.
    pub(super) fn collector(&self) -> Collector {
        Collector {
            queues: self.queues.clone(),
        }
    }
}

/// One controller's queue, as seen from outside. Clones share it.
#[derive(Clone, Debug)]
pub struct Workqueue {
    name: String,
    state: Arc<Mutex<QueueState>>,
    adds: Counter,
    retries: Counter,
    queue_duration: Histogram,
    work_duration: Histogram,
}

#[derive(Debug, Default)]
struct QueueState {
    /// Object key → when it is due (`None`: at a time only kube-runtime knows).
    waiting: HashMap<String, Option<Instant>>,
    /// Object key → when its reconcile started.
    running: HashMap<String, Instant>,
}

impl Workqueue {
    /// `key` is due now (a watch event).
    pub fn add(&self, key: String) {
        self.add_after(key, Duration::ZERO);
    }

    /// `key` is due after `delay` (a retry).
    pub fn add_after(&self, key: String, delay: Duration) {
        self.wait(key, Some(Instant::now() + delay));
    }

    /// A reconcile of `key` asked to run it again, after a delay it does not tell.
    pub fn requeued(&self, key: String) {
        self.wait(key, None);
    }

    fn wait(&self, key: String, due: Option<Instant>) {
        let mut state = lock(&self.state);
        match state.waiting.entry(key) {
            std::collections::hash_map::Entry::Occupied(mut waiting) => {
                let earlier = match (*waiting.get(), due) {
                    (Some(waiting), Some(due)) => Some(waiting.min(due)),
                    (waiting, due) => waiting.or(due),
                };
                waiting.insert(earlier);
            }
            std::collections::hash_map::Entry::Vacant(vacant) => {
                vacant.insert(due);
                self.adds.inc();
            }
        }
    }

    /// `key` failed and is retried after `delay`.
    pub fn retry(&self, key: String, delay: Duration) {
        self.retries.inc();
        self.add_after(key, delay);
    }

    /// The reconcile of `key` starts: it leaves the queue.
    pub fn started(&self, key: &str) {
        let now = Instant::now();
        let mut state = lock(&self.state);
        if let Some(Some(due)) = state.waiting.remove(key) {
            self.queue_duration
                .observe(now.saturating_duration_since(due).as_secs_f64());
        }
        state.running.insert(key.to_owned(), now);
    }

    /// The reconcile of `key` is over.
    pub fn finished(&self, key: &str) {
        let started = lock(&self.state).running.remove(key);
        if let Some(started) = started {
            self.work_duration.observe(started.elapsed().as_secs_f64());
        }
    }

    /// The gauges as of now.
    fn gauges(&self) -> QueueGauges {
        let now = Instant::now();
        let state = lock(&self.state);
        let depth = state
            .waiting
            .values()
            .filter(|due| due.is_some_and(|due| due <= now))
            .count();
        let running = state
            .running
            .values()
            .map(|started| now.saturating_duration_since(*started).as_secs_f64());
        let (total, longest) = running.fold((0.0, 0.0_f64), |(total, longest), seconds| {
            (total + seconds, longest.max(seconds))
        });
        QueueGauges {
            depth: depth as f64,
            unfinished_seconds: total,
            longest_running_seconds: longest,
        }
    }
}

/// A gauge family of the queues: name, help, and its value for one queue.
type GaugeFamily = (&'static str, &'static str, fn(&QueueGauges) -> f64);

/// What the gauges of one queue show.
struct QueueGauges {
    depth: f64,
    /// Seconds of work in progress.
    unfinished_seconds: f64,
    longest_running_seconds: f64,
}

/// Computes the gauges of every queue at scrape time.
#[derive(Debug)]
pub(super) struct Collector {
    queues: Arc<Mutex<BTreeMap<String, Workqueue>>>,
}

impl prometheus_client::collector::Collector for Collector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let gauges: Vec<_> = lock(&self.queues)
            .values()
            .map(|queue| {
                let labels = NameLabels {
                    name: queue.name.clone(),
                };
                (labels, queue.gauges())
            })
            .collect();
        let families: [GaugeFamily; 3] = [
            ("workqueue_depth", "Current depth of workqueue", |gauges| {
                gauges.depth
            }),
            (
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
                |gauges| gauges.unfinished_seconds,
            ),
            (
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running.",
                |gauges| gauges.longest_running_seconds,
            ),
        ];
        for (name, help, value) in families {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for (labels, gauges) in &gauges {
                ConstGauge::new(value(gauges)).encode(family.encode_family(labels)?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_waits_once_and_delayed_ones_count_when_due() {
        let families = Families::register(&mut Registry::default());
        let queue = families.queue("test");
        queue.add("ns/a".into());
        queue.add("ns/a".into());
        queue.add_after("ns/b".into(), Duration::from_secs(60));
        queue.requeued("ns/c".into());
        assert_eq!(queue.adds.get(), 3, "a waiting object is not added again");
        assert_eq!(queue.gauges().depth, 1.0, "b and c are not due yet");
        queue.add("ns/b".into());
        assert_eq!(queue.gauges().depth, 2.0, "an event makes b due at once");
        queue.started("ns/a");
        assert_eq!(queue.gauges().depth, 1.0);
        queue.finished("ns/a");
        assert_eq!(queue.gauges().unfinished_seconds, 0.0, "nothing running");
        queue.retry("ns/a".into(), Duration::ZERO);
        assert_eq!(queue.retries.get(), 1);
        assert_eq!(queue.adds.get(), 4);
    }
}
