// Package v2 is the Go twin of the `api` crate's CronJob v2: the tutorial's second part, with
// the schedule as one field per part; v1 is the storage version.
//
// +groupName=batch.tutorial.kubebuilder.io
package v2
