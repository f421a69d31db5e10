//! The TOML schema of what takes a fleet's replicas in and out of service
//! (`[server.outlier]`, `[server.health_check]`, `[server.autoscale]`), as
//! serde reads it; kept beside [`super::schema`], which re-exports it.

use serde::Deserialize;

use super::duration::DurationValue;

/// `[[server.replica_service]]`: replicas whose service time is their own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplicaServiceFile {
    /// The replicas, by index from 0.
    pub replicas: Vec<u32>,
    /// Their service time.
    pub service: super::schema::DistFile,
}

/// `[server.outlier]`: Envoy's `outlier_detection` fields, Envoy's defaults.
#[derive(Debug, Default, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct OutlierFile {
    /// 5xx in a row that eject (5; 0 turns this detector off).
    pub consecutive_5xx: Option<u32>,
    /// Time between sweeps (10 s).
    pub interval: Option<DurationValue>,
    /// Ejection time per ejection in a row (30 s).
    pub base_ejection_time: Option<DurationValue>,
    /// Longest ejection (300 s).
    pub max_ejection_time: Option<DurationValue>,
    /// Most replicas ejected at once, percent (10).
    pub max_ejection_percent: Option<f64>,
    /// Failure percentage that ejects (off unless given; Envoy's default 85
    /// applies only with `enforcing_failure_percentage`).
    pub failure_percentage_threshold: Option<f64>,
    /// Replicas with enough volume for failure-percentage ejection (5).
    pub failure_percentage_minimum_hosts: Option<u32>,
    /// Answers in an interval for a replica to be judged (50).
    pub failure_percentage_request_volume: Option<u32>,
    /// Success-rate ejection on (100, Envoy's default) or off (0), percent.
    pub enforcing_success_rate: Option<f64>,
    /// A replica below mean - factor/1000 x stdev of the success rates is
    /// ejected (1900).
    pub success_rate_stdev_factor: Option<f64>,
    /// Replicas with enough volume for success-rate ejection (5).
    pub success_rate_minimum_hosts: Option<u32>,
    /// Answers in an interval for a replica to be judged (100).
    pub success_rate_request_volume: Option<u32>,
}

/// `[server.health_check]`: Kubernetes readiness-probe defaults.
#[derive(Debug, Default, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct HealthCheckFile {
    /// Time between checks (10 s).
    pub interval: Option<DurationValue>,
    /// A slower check fails (1 s).
    pub timeout: Option<DurationValue>,
    /// Failures in a row that take a replica out (3).
    pub unhealthy_threshold: Option<u32>,
    /// Passes in a row that bring it back (1).
    pub healthy_threshold: Option<u32>,
}

/// `[server.autoscale]`: Kubernetes' HorizontalPodAutoscaler.
#[derive(Debug, Default, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct AutoscaleFile {
    /// Fewest replicas (`minReplicas`, default 1).
    pub min_replicas: Option<u32>,
    /// Most replicas (`maxReplicas`, required).
    pub max_replicas: Option<u32>,
    /// Target utilisation of the workers, percent (`averageUtilization`, required).
    pub average_utilization: Option<f64>,
    /// Time between decisions (15 s).
    pub sync_period: Option<DurationValue>,
    /// Ratio within 1 +- this changes nothing (0.1).
    pub tolerance: Option<f64>,
    /// Scale-down stabilisation window (300 s).
    pub scale_down_stabilization: Option<DurationValue>,
    /// Scale-up stabilisation window (0 s).
    pub scale_up_stabilization: Option<DurationValue>,
    /// From the decision to a replica in service (required).
    pub startup: Option<DurationValue>,
}
