// Package v1 is the Go twin of the `api` crate's CronJob (kubebuilder's tutorial types, plus
// the short name, category and printer columns this project adds).
//
// +groupName=batch.tutorial.kubebuilder.io
package v1
