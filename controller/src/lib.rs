//! The CronJob operator: reconciler and admission webhooks of the CronJob API.

pub mod cronjob;
// +kubebuilder:scaffold:modules
