//! What the apiserver itself says of the watches open on it: a test or benchmark counts
//! the watches of a manager without trusting the manager.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result};

/// The watches open on the apiserver `client` talks to, by resource (every scope and
/// version), from its `apiserver_longrunning_requests{verb="WATCH"}` gauge.
pub async fn open_watches(client: &kube::Client) -> Result<BTreeMap<String, u64>> {
    let request = http::Request::get("/metrics").body(Vec::new())?;
    let scrape = client
        .request_text(request)
        .await
        .context("reading the apiserver's /metrics")?;
    let mut watches = BTreeMap::new();
    for line in scrape.lines() {
        let Some(labels) = line.strip_prefix("apiserver_longrunning_requests{") else {
            continue;
        };
        if !labels.contains("verb=\"WATCH\"") {
            continue;
        }
        let resource = labels
            .split(',')
            .find_map(|label| label.strip_prefix("resource=\""))
            .and_then(|value| value.split('"').next())
            .unwrap_or_default()
            .to_owned();
        let count = line
            .rsplit_once(' ')
            .and_then(|(_, value)| value.parse::<f64>().ok())
            .unwrap_or_default();
        *watches.entry(resource).or_default() += count as u64;
    }
    Ok(watches)
}
