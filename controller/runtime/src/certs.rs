//! Self-signed certificate authorities and the certificates they issue.
//!
//! Used wherever no cert-manager is around: the local control plane's PKI, the webhook
//! and metrics servers of a local run, and tests. Keys are ECDSA P-256 in PKCS#8 PEM, as
//! controller-runtime's envtest issues them.

use std::fs;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType,
};

/// The common name of the CAs made for servers on the loopback interface.
pub(crate) const LOCAL_CA_NAME: &str = "kubebuilder-runtime local CA";

/// Why a certificate could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// rcgen could not make a key or sign a certificate (an invalid DNS name, say).
    #[error("cannot generate certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// A certificate or key file, or its directory, could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why it could not be written.
        source: std::io::Error,
    },
}

/// A certificate and its private key, both PEM.
#[derive(Clone, Debug)]
pub struct CertPair {
    /// The certificate (`tls.crt`).
    pub cert_pem: String,
    /// Its private key, PKCS#8 (`tls.key`).
    pub key_pem: String,
}

/// A certificate authority that can issue serving and client certificates.
pub struct CertificateAuthority {
    issuer: CertifiedIssuer<'static, KeyPair>,
    key_pem: String,
}

impl CertificateAuthority {
    /// A new self-signed CA named `common_name`.
    pub fn new(common_name: &str) -> Result<Self, CertError> {
        let mut params = CertificateParams::default();
        params.distinguished_name = name(common_name, None);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate()?;
        let key_pem = key.serialize_pem();
        let issuer = CertifiedIssuer::self_signed(params, key)?;
        Ok(Self { issuer, key_pem })
    }

    /// The CA certificate, PEM: what clients put in their trust store (a `caBundle`).
    pub fn cert_pem(&self) -> String {
        self.issuer.pem()
    }

    /// The CA certificate and key, PEM. The key doubles as a signing key (the apiserver's
    /// service-account issuer uses it that way).
    pub fn pair(&self) -> CertPair {
        CertPair {
            cert_pem: self.cert_pem(),
            key_pem: self.key_pem.clone(),
        }
    }

    /// A serving certificate for the given DNS names and IP addresses.
    pub fn issue_server(&self, dns_names: &[&str], ips: &[IpAddr]) -> Result<CertPair, CertError> {
        let mut params = CertificateParams::default();
        params.distinguished_name = name(dns_names.first().copied().unwrap_or("localhost"), None);
        params.subject_alt_names = dns_names
            .iter()
            .map(|dns| Ok(SanType::DnsName((*dns).try_into()?)))
            .chain(ips.iter().map(|ip| Ok(SanType::IpAddress(*ip))))
            .collect::<Result<_, rcgen::Error>>()?;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        self.issue(params)
    }

    /// A serving certificate for the loopback interface: `localhost`, `127.0.0.1`, `::1`.
    pub fn issue_loopback_server(&self) -> Result<CertPair, CertError> {
        self.issue_server(
            &["localhost"],
            &[
                IpAddr::V4(Ipv4Addr::LOCALHOST),
                IpAddr::V6(Ipv6Addr::LOCALHOST),
            ],
        )
    }

    /// A client certificate: Kubernetes reads the user name from CN and the group from O.
    /// (rcgen writes one value per name attribute, so one group; impersonation gives more.)
    pub fn issue_client(&self, user: &str, group: Option<&str>) -> Result<CertPair, CertError> {
        let mut params = CertificateParams::default();
        params.distinguished_name = name(user, group);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        self.issue(params)
    }

    fn issue(&self, mut params: CertificateParams) -> Result<CertPair, CertError> {
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        let key = KeyPair::generate()?;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(CertPair {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }
}

/// Generates a CA and a serving certificate for the loopback interface (`localhost`,
/// `127.0.0.1`, `::1`), writes the certificate and key as `dir/cert_name` and
/// `dir/key_name` (the key readable by the owner only), and returns the CA certificate,
/// PEM: the `caBundle` of webhook configurations pointing at a local server.
pub fn write_loopback_serving_certificate(
    dir: &Path,
    cert_name: &str,
    key_name: &str,
) -> Result<String, CertError> {
    let ca = CertificateAuthority::new(LOCAL_CA_NAME)?;
    let pair = ca.issue_loopback_server()?;
    let write = |name: &str, contents: &str, mode: u32| {
        let path = dir.join(name);
        fs::create_dir_all(dir)
            .and_then(|()| {
                let mut file = fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(mode)
                    .open(&path)?;
                file.write_all(contents.as_bytes())
            })
            .map_err(|source| CertError::Write { path, source })
    };
    write(cert_name, &pair.cert_pem, 0o644)?;
    write(key_name, &pair.key_pem, 0o600)?;
    Ok(ca.cert_pem())
}

fn name(common_name: &str, organization: Option<&str>) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    if let Some(organization) = organization {
        name.push(DnType::OrganizationName, organization);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_pem_certificates_signed_by_the_ca() {
        let ca = CertificateAuthority::new("test-ca").unwrap();
        let server = ca
            .issue_server(&["localhost"], &["127.0.0.1".parse().unwrap()])
            .unwrap();
        let client = ca.issue_client("admin", Some("system:masters")).unwrap();
        for pair in [&server, &client] {
            assert!(pair.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
            assert!(pair.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        }
        assert_ne!(server.cert_pem, client.cert_pem);
        assert!(ca.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
    }

    #[test]
    fn writes_a_loopback_serving_pair_and_returns_its_ca() {
        use std::os::unix::fs::PermissionsExt as _;

        let dir = tempfile::tempdir().unwrap();
        let certs = dir.path().join("serving-certs");
        let ca_pem = write_loopback_serving_certificate(&certs, "tls.crt", "tls.key").unwrap();
        assert!(ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        let cert = fs::read_to_string(certs.join("tls.crt")).unwrap();
        assert!(cert.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_ne!(cert, ca_pem);
        let key = fs::metadata(certs.join("tls.key")).unwrap();
        assert_eq!(key.permissions().mode() & 0o777, 0o600);
    }
}
