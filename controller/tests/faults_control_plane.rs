//! The control plane down, and permissions revoked, while the CronJob controller runs (written next).
