//! The process and Tokio runtime basics, read at each scrape: what Go's process collector
//! exposes (`process_*`, from `/proc/self`), and in place of Go's `go_*` runtime metrics
//! the Tokio runtime's workers, tasks and global queue (`tokio_runtime_*`).

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Encodes the process and runtime metrics as of now.
#[derive(Debug)]
pub(super) struct Collector;

impl prometheus_client::collector::Collector for Collector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if let Some(process) = Process::read() {
            let cpu = ConstCounter::new(process.cpu_seconds);
            cpu.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds.",
                None,
                cpu.metric_type(),
            )?)?;
            for (name, help, value) in [
                (
                    "process_resident_memory_bytes",
                    "Resident memory size in bytes.",
                    process.resident_bytes,
                ),
                (
                    "process_virtual_memory_bytes",
                    "Virtual memory size in bytes.",
                    process.virtual_bytes,
                ),
                (
                    "process_start_time_seconds",
                    "Start time of the process since unix epoch in seconds.",
                    process.start_time_seconds,
                ),
                (
                    "process_open_fds",
                    "Number of open file descriptors.",
                    process.open_fds,
                ),
                (
                    "process_max_fds",
                    "Maximum number of open file descriptors.",
                    process.max_fds,
                ),
            ] {
                gauge(&mut encoder, name, help, value)?;
            }
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let metrics = runtime.metrics();
            for (name, help, value) in [
                (
                    "tokio_runtime_workers",
                    "Number of worker threads of the Tokio runtime.",
                    metrics.num_workers(),
                ),
                (
                    "tokio_runtime_alive_tasks",
                    "Number of tasks alive in the Tokio runtime.",
                    metrics.num_alive_tasks(),
                ),
                (
                    "tokio_runtime_global_queue_depth",
                    "Number of tasks in the Tokio runtime's global queue.",
                    metrics.global_queue_depth(),
                ),
            ] {
                gauge(&mut encoder, name, help, value as f64)?;
            }
        }
        Ok(())
    }
}

fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), std::fmt::Error> {
    let gauge = ConstGauge::new(value);
    gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)
}

/// What `/proc/self` tells of this process.
struct Process {
    cpu_seconds: f64,
    resident_bytes: f64,
    virtual_bytes: f64,
    start_time_seconds: f64,
    open_fds: f64,
    max_fds: f64,
}

impl Process {
    fn read() -> Option<Self> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        // The command name, in parentheses, may hold spaces: fields start after it.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        // Field numbers of proc(5), from 3 (state) on.
        let field = |number: usize| fields.get(number - 3)?.parse::<f64>().ok();
        // SAFETY: sysconf only reads configuration values.
        let (ticks, page_size) = unsafe {
            (
                libc::sysconf(libc::_SC_CLK_TCK) as f64,
                libc::sysconf(libc::_SC_PAGESIZE) as f64,
            )
        };
        let boot_time = std::fs::read_to_string("/proc/stat")
            .ok()?
            .lines()
            .find_map(|line| line.strip_prefix("btime ")?.trim().parse::<f64>().ok())?;
        let max_fds = std::fs::read_to_string("/proc/self/limits")
            .ok()?
            .lines()
            .find(|line| line.starts_with("Max open files"))?
            .split_whitespace()
            .nth(3)?
            .parse()
            .ok()?;
        Some(Self {
            cpu_seconds: (field(14)? + field(15)?) / ticks,
            virtual_bytes: field(23)?,
            resident_bytes: field(24)? * page_size,
            start_time_seconds: boot_time + field(22)? / ticks,
            open_fds: std::fs::read_dir("/proc/self/fd").ok()?.count() as f64,
            max_fds,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_this_process() {
        let process = Process::read().expect("/proc/self is readable");
        assert!(process.resident_bytes > 0.0);
        assert!(process.virtual_bytes >= process.resident_bytes);
        assert!(process.open_fds >= 3.0 && process.max_fds >= process.open_fds);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(
            process.start_time_seconds <= now + 1.0 && process.start_time_seconds > now - 3600.0
        );
    }
}
