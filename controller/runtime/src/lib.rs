//! The runtime every operator built with this project links: the counterpart of
//! controller-runtime's manager, metrics server, probes and webhook server.

pub mod certs;
