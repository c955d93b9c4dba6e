//! The manager's command-line flags, named and defaulted as in kubebuilder's scaffolded
//! `cmd/main.go`, as a clap [`Args`](clap::Args) struct a binary flattens into its own CLI.
//!
//! ```
//! use clap::Parser;
//! use kubebuilder_runtime::ManagerArgs;
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     manager: ManagerArgs,
//! }
//!
//! let cli = Cli::parse_from(["controller", "--leader-elect", "--metrics-secure=false"]);
//! assert!(cli.manager.leader_elect);
//! assert!(!cli.manager.metrics_secure);
//! ```

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use clap::{ArgAction, Args, ValueEnum};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::util::SubscriberInitExt as _;

/// The flags of kubebuilder's manager (`cmd/main.go`), plus `--namespace`, `--log-level`,
/// `--log-format`, the leader-election lease's name, namespace and timing, client-go's
/// `--kube-api-qps`/`--kube-api-burst`, and `--register-webhooks-on-loopback` for local
/// control planes.
///
/// Boolean flags take Go's forms: `--leader-elect`, `--leader-elect=true`,
/// `--metrics-secure=false` (but not `--metrics-secure false`, which Go reads as a
/// positional argument either).
///
/// Where the servers listen: as in controller-runtime, on every interface by default,
/// because in a pod the kubelet's probes and the Services reach the pod IP, not loopback.
/// Off a cluster nothing needs more than 127.0.0.1: `cargo xtask run` passes
/// `127.0.0.1:<port>` for the probe and metrics addresses, and
/// `--register-webhooks-on-loopback` keeps the webhook server on 127.0.0.1.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct ManagerArgs {
    /// The address the metrics endpoint binds to: `:8443` for HTTPS, `:8080` for HTTP, or
    /// `0` (the default) to disable the metrics service. `:<port>` is every interface, for
    /// the metrics Service and Prometheus, which reach the pod IP; `127.0.0.1:<port>` keeps
    /// a local run's metrics on this machine.
    #[arg(long, default_value = "0", value_name = "ADDRESS")]
    pub metrics_bind_address: BindAddress,

    /// Serve metrics over HTTPS, authenticating and authorizing every scrape with the
    /// apiserver (TokenReview + SubjectAccessReview); `=false` serves plain HTTP.
    #[arg(long, default_value = "true", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set,
          value_parser = parse_go_bool)]
    pub metrics_secure: bool,

    /// The directory holding the metrics server's certificate; a self-signed one is
    /// generated when not given.
    #[arg(long, value_name = "DIR")]
    pub metrics_cert_path: Option<PathBuf>,

    /// The metrics server's certificate file name inside `--metrics-cert-path`.
    #[arg(long, default_value = "tls.crt", value_name = "FILE")]
    pub metrics_cert_name: String,

    /// The metrics server's key file name inside `--metrics-cert-path`.
    #[arg(long, default_value = "tls.key", value_name = "FILE")]
    pub metrics_cert_key: String,

    /// The address the probe endpoints (`/healthz`, `/readyz`) bind to; `0` disables them.
    /// The default, `:8081`, is every interface: the kubelet probes the pod IP.
    #[arg(long, default_value = ":8081", value_name = "ADDRESS")]
    pub health_probe_bind_address: BindAddress,

    /// Enable leader election: controllers run only in the replica holding the lease.
    #[arg(long, default_value = "false", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set,
          value_parser = parse_go_bool)]
    pub leader_elect: bool,

    /// The name of the leader-election Lease (the binary usually sets a default, e.g.
    /// `80807133.tutorial.kubebuilder.io`).
    #[arg(long, value_name = "NAME")]
    pub leader_election_id: Option<String>,

    /// The namespace of the leader-election Lease; defaults to the pod's namespace (or
    /// the kubeconfig context's), else `default`.
    #[arg(long, value_name = "NAMESPACE")]
    pub leader_election_namespace: Option<String>,

    /// How long candidates wait for a lease that stopped changing before taking it over
    /// (controller-runtime's `LeaseDuration`), in Go's notation: `15s`, `1m`.
    #[arg(long, default_value = "15s", value_name = "DURATION", value_parser = parse_go_duration)]
    pub leader_elect_lease_duration: Duration,

    /// How long the leader keeps leading after its last successful renewal; past it, its
    /// controllers' writes are refused and they stop (controller-runtime's `RenewDeadline`).
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = parse_go_duration)]
    pub leader_elect_renew_deadline: Duration,

    /// How often the leader renews and candidates try (controller-runtime's `RetryPeriod`).
    #[arg(long, default_value = "2s", value_name = "DURATION", value_parser = parse_go_duration)]
    pub leader_elect_retry_period: Duration,

    /// The port the webhook server listens on, on every interface (the webhook Service
    /// sends the apiserver's calls to the pod IP), or on 127.0.0.1 only with
    /// `--register-webhooks-on-loopback`; -1 switches the webhook server off, as in
    /// controller-runtime v0.25 (a Helm chart installed with `webhook.enabled=false` passes it).
    #[arg(
        long,
        default_value_t = 9443,
        value_name = "PORT",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i32).range(WEBHOOK_SERVER_OFF..=65535),
    )]
    pub webhook_port: i32,

    /// The directory holding the webhook server's certificate; defaults to
    /// `<tmp>/k8s-webhook-server/serving-certs` as in controller-runtime.
    #[arg(long, value_name = "DIR")]
    pub webhook_cert_path: Option<PathBuf>,

    /// The webhook server's certificate file name inside `--webhook-cert-path`.
    #[arg(long, default_value = "tls.crt", value_name = "FILE")]
    pub webhook_cert_name: String,

    /// The webhook server's key file name inside `--webhook-cert-path`.
    #[arg(long, default_value = "tls.key", value_name = "FILE")]
    pub webhook_cert_key: String,

    /// Allow HTTP/2 on the metrics and webhook servers. Off by default because of the
    /// HTTP/2 Stream Cancellation and Rapid Reset CVEs, as in kubebuilder.
    #[arg(long, default_value = "false", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set,
          value_parser = parse_go_bool)]
    pub enable_http2: bool,

    /// Watch only these namespaces (repeatable or comma-separated); all namespaces when
    /// none is given.
    #[arg(long = "namespace", value_name = "NAMESPACE", value_delimiter = ',')]
    pub namespaces: Vec<String>,

    /// Keep `metadata.managedFields` in the cache. By default the cache drops them from
    /// every object, as controller-runtime's `cache.TransformStripManagedFields` does:
    /// they are most of a small object's memory and reconcilers rarely read them.
    #[arg(long, default_value = "false", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set,
          value_parser = parse_go_bool)]
    pub cache_keep_managed_fields: bool,

    /// Client-side limit of requests per second to the apiserver (client-go's token
    /// bucket); 0 or negative: no client-side limit, as controller-runtime's default (the
    /// apiserver's API Priority and Fairness protects it).
    #[arg(long, default_value_t = -1.0, value_name = "QPS", allow_hyphen_values = true)]
    pub kube_api_qps: f32,

    /// How many requests may go at once above `--kube-api-qps` (the bucket's size).
    #[arg(long, default_value_t = 30, value_name = "REQUESTS")]
    pub kube_api_burst: u32,

    /// For a local control plane: serve the webhooks on 127.0.0.1 only, with a certificate
    /// generated for it, register them with the apiserver at
    /// `https://127.0.0.1:<webhook-port>`, and remove the registration on shutdown. (In a
    /// cluster, config/webhook and cert-manager do this.)
    #[arg(long, default_value = "false", value_name = "BOOL", num_args = 0..=1,
          require_equals = true, default_missing_value = "true", action = ArgAction::Set,
          value_parser = parse_go_bool, conflicts_with = "webhook_cert_path")]
    pub register_webhooks_on_loopback: bool,

    /// Log filter: a level (`info`, `debug`, ...) or `tracing` directives
    /// (`info,kube=debug`).
    #[arg(long, default_value = "info", value_name = "FILTER")]
    pub log_level: String,

    /// Log line format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl Default for ManagerArgs {
    /// The defaults of the flags, as if the binary ran without arguments.
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Defaults {
            #[command(flatten)]
            args: ManagerArgs,
        }
        <Defaults as clap::Parser>::parse_from(["manager"]).args
    }
}

impl ManagerArgs {
    /// Installs the global `tracing` subscriber described by `--log-level` and
    /// `--log-format`. Fails when the filter does not parse or a subscriber is already set.
    pub fn init_logging(&self) -> Result<(), LoggingError> {
        let filter = EnvFilter::try_new(&self.log_level).map_err(|err| {
            LoggingError(format!("invalid --log-level {:?}: {err}", self.log_level))
        })?;
        // Logs go to stderr, as controller-runtime's do; colour codes only for a terminal, so
        // piped or collected logs stay plain text.
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
        let result = match self.log_format {
            LogFormat::Text => builder.finish().try_init(),
            LogFormat::Json => builder.json().finish().try_init(),
        };
        result.map_err(|err| LoggingError(err.to_string()))
    }
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot initialise logging: {0}")]
pub struct LoggingError(String);

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// A duration in Go's `time.ParseDuration` notation, without signs or fractions: one or
/// more `<integer><unit>` with units `ms`, `s`, `m`, `h` (`1m30s`, `500ms`).
fn parse_go_duration(value: &str) -> Result<Duration, String> {
    let invalid = || format!("{value:?} is not a duration: use e.g. 15s, 1m30s, 500ms");
    let mut total = Duration::ZERO;
    let mut rest = value;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .ok_or_else(invalid)?;
        let count: u64 = rest[..digits].parse().map_err(|_| invalid())?;
        let unit_len = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len() - digits);
        let unit = match &rest[digits..digits + unit_len] {
            "ms" => Duration::from_millis(1),
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(invalid()),
        };
        total += unit * u32::try_from(count).map_err(|_| invalid())?;
        rest = &rest[digits + unit_len..];
    }
    if value.is_empty() {
        return Err(invalid());
    }
    Ok(total)
}

/// A listen address in Go's `net.Listen` notation: `:8080` (all interfaces),
/// `127.0.0.1:0` (a free port), `localhost:8080`, or `0` for "disabled".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BindAddress {
    /// The server is not started.
    Disabled,
    /// `host:port`, where an empty host means every IPv4 interface.
    HostPort(String),
}

impl BindAddress {
    /// Resolves the address; `None` when disabled.
    pub async fn resolve(&self) -> std::io::Result<Option<SocketAddr>> {
        let host_port = match self {
            BindAddress::Disabled => return Ok(None),
            BindAddress::HostPort(host_port) => host_port,
        };
        if let Some(port) = host_port.strip_prefix(':') {
            let port = port.parse::<u16>().map_err(|err| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{self}: {err}"))
            })?;
            return Ok(Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::UNSPECIFIED,
                port,
            ))));
        }
        let mut addrs = tokio::net::lookup_host(host_port.as_str()).await?;
        addrs.next().map(Some).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{self} resolves to nothing"),
            )
        })
    }
}

impl FromStr for BindAddress {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        if value == "0" {
            return Ok(BindAddress::Disabled);
        }
        match value.rsplit_once(':') {
            Some((_, port)) if !port.is_empty() => Ok(BindAddress::HostPort(value.to_owned())),
            _ => Err(format!(
                "{value:?} is not an address: use host:port, :port, or 0 to disable"
            )),
        }
    }
}

impl From<SocketAddr> for BindAddress {
    fn from(addr: SocketAddr) -> Self {
        BindAddress::HostPort(addr.to_string())
    }
}

impl fmt::Display for BindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BindAddress::Disabled => f.write_str("0"),
            BindAddress::HostPort(host_port) => f.write_str(host_port),
        }
    }
}

/// Go's `strconv.ParseBool`, which is what `flag` uses for boolean flags.
fn parse_go_bool(value: &str) -> Result<bool, String> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Ok(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Ok(false),
        _ => Err(format!("{value:?} is not a boolean (use true or false)")),
    }
}

/// The `--webhook-port` that switches the webhook server off.
const WEBHOOK_SERVER_OFF: i64 = -1;

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        manager: ManagerArgs,
    }

    fn parse(args: &[&str]) -> Result<ManagerArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("manager").chain(args.iter().copied()))
            .map(|cli| cli.manager)
    }

    #[test]
    fn defaults_are_kubebuilders() {
        let args = ManagerArgs::default();
        assert_eq!(args.metrics_bind_address, BindAddress::Disabled);
        assert!(args.metrics_secure);
        assert_eq!(args.metrics_cert_path, None);
        assert_eq!(args.webhook_cert_path, None);
        assert_eq!(
            (
                args.metrics_cert_name.as_str(),
                args.metrics_cert_key.as_str()
            ),
            ("tls.crt", "tls.key")
        );
        assert_eq!(
            args.health_probe_bind_address,
            BindAddress::HostPort(":8081".into())
        );
        assert!(!args.leader_elect);
        assert_eq!(args.leader_election_id, None);
        assert_eq!(args.webhook_port, 9443);
        assert_eq!(parse(&["--webhook-port=-1"]).unwrap().webhook_port, -1);
        assert_eq!(parse(&["--webhook-port", "-1"]).unwrap().webhook_port, -1);
        for wrong in ["-2", "65536", "x"] {
            let error = parse(&["--webhook-port", wrong]).unwrap_err().to_string();
            assert!(error.contains("--webhook-port"), "{wrong}: {error}");
        }
        assert_eq!(
            (
                args.webhook_cert_name.as_str(),
                args.webhook_cert_key.as_str()
            ),
            ("tls.crt", "tls.key")
        );
        assert!(!args.enable_http2);
        assert!(args.namespaces.is_empty());
        assert_eq!(args.log_level, "info");
        assert_eq!(args.log_format, LogFormat::Text);
        assert!(args.kube_api_qps <= 0.0, "no client-side limit");
        assert_eq!(args.kube_api_burst, 30);
        assert!(!args.register_webhooks_on_loopback);
    }

    #[test]
    fn rate_limits_and_loopback_webhooks_parse() {
        let args = parse(&[
            "--kube-api-qps=20",
            "--kube-api-burst",
            "40",
            "--register-webhooks-on-loopback",
        ])
        .unwrap();
        assert_eq!((args.kube_api_qps, args.kube_api_burst), (20.0, 40));
        assert!(args.register_webhooks_on_loopback);
        assert_eq!(parse(&["--kube-api-qps", "-1"]).unwrap().kube_api_qps, -1.0);
        let err = parse(&[
            "--register-webhooks-on-loopback",
            "--webhook-cert-path=/certs",
        ])
        .unwrap_err()
        .to_string();
        assert!(err.contains("cannot be used with"), "{err}");
    }

    #[test]
    fn boolean_flags_take_gos_forms() {
        assert!(parse(&["--leader-elect"]).unwrap().leader_elect);
        assert!(parse(&["--leader-elect=true"]).unwrap().leader_elect);
        assert!(parse(&["--leader-elect=T"]).unwrap().leader_elect);
        assert!(!parse(&["--metrics-secure=false"]).unwrap().metrics_secure);
        assert!(!parse(&["--metrics-secure=0"]).unwrap().metrics_secure);
        assert!(parse(&["--enable-http2=1"]).unwrap().enable_http2);
        let err = parse(&["--metrics-secure=nope"]).unwrap_err().to_string();
        assert!(err.contains("\"nope\" is not a boolean"), "{err}");
        // Go does not take the value as the next argument either.
        assert!(parse(&["--metrics-secure", "false"]).is_err());
    }

    #[test]
    fn durations_parse_like_go() {
        assert_eq!(parse_go_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_go_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_go_duration("2h"), Ok(Duration::from_secs(7200)));
        for bad in ["", "15", "s", "1.5s", "-1s", "10d", "1m30"] {
            let err = parse_go_duration(bad).unwrap_err();
            assert!(err.contains("is not a duration"), "{bad}: {err}");
        }
        let args = parse(&["--leader-elect-renew-deadline=4s"]).unwrap();
        assert_eq!(args.leader_elect_renew_deadline, Duration::from_secs(4));
        assert_eq!(args.leader_elect_lease_duration, Duration::from_secs(15));
        assert_eq!(args.leader_elect_retry_period, Duration::from_secs(2));
    }

    #[test]
    fn addresses_and_lists_parse() {
        let args = parse(&[
            "--metrics-bind-address=:8443",
            "--health-probe-bind-address=0",
            "--namespace=a",
            "--namespace",
            "b,c",
            "--log-format=json",
            "--webhook-cert-path=/certs",
        ])
        .unwrap();
        assert_eq!(
            args.metrics_bind_address,
            BindAddress::HostPort(":8443".into())
        );
        assert_eq!(args.health_probe_bind_address, BindAddress::Disabled);
        assert_eq!(args.namespaces, ["a", "b", "c"]);
        assert_eq!(args.log_format, LogFormat::Json);
        assert_eq!(args.webhook_cert_path, Some(PathBuf::from("/certs")));
        let err = parse(&["--metrics-bind-address=8443"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not an address"), "{err}");
    }

    #[tokio::test]
    async fn bind_addresses_resolve_like_go() {
        let all = BindAddress::from_str(":8081")
            .unwrap()
            .resolve()
            .await
            .unwrap();
        assert_eq!(all, Some("0.0.0.0:8081".parse().unwrap()));
        let loopback = BindAddress::from_str("127.0.0.1:0")
            .unwrap()
            .resolve()
            .await
            .unwrap();
        assert_eq!(loopback, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(BindAddress::Disabled.resolve().await.unwrap(), None);
        assert!(
            BindAddress::from_str(":http")
                .unwrap()
                .resolve()
                .await
                .is_err()
        );
    }

    #[test]
    fn invalid_log_filter_is_reported() {
        let args = ManagerArgs {
            log_level: "info,=[".into(),
            ..ManagerArgs::default()
        };
        let err = args.init_logging().unwrap_err().to_string();
        assert!(err.contains("invalid --log-level"), "{err}");
    }
}
