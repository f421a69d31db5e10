//! A strategy's `limits`: a proxy's connection-pool limits, as Envoy's
//! cluster circuit-breaker thresholds name them ([`crate::retry::pool`]).

use serde::Deserialize;

use super::error::ScenarioError;
use super::strategy::Layers;
use super::validate::Checker;
use crate::retry::PoolLimits;

/// `limits = { max_connections = 1024, ... }`: Envoy's thresholds, each
/// 1024 unless given.
#[derive(Debug, Default, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Connections open at once (HTTP/1.1: attempts on the wire).
    pub max_connections: Option<u32>,
    /// Attempts waiting for a connection at once.
    pub max_pending_requests: Option<u32>,
    /// Attempts on the wire at once.
    pub max_requests: Option<u32>,
    /// Connections carry many attempts at once (HTTP/2): none waits.
    pub http2: Option<bool>,
}

impl Checker<'_> {
    /// The users' pool limits, if the strategy (or `[retry]`) sets them; a
    /// call chain's tier may not (they are the users' proxies' limits).
    pub(super) fn limits(
        &self,
        l: &Layers,
        hedged: bool,
    ) -> Result<Option<PoolLimits>, ScenarioError> {
        let Some((f, key)) = l.get("limits", |r| r.limits.clone()) else {
            return Ok(None);
        };
        if l.in_tier() {
            if key == l.path("limits") {
                return self.err(
                    &key,
                    "limits are the users' proxies' (the users' attempts to the server); \
                     a service's calls in a chain take none",
                );
            }
            return Ok(None);
        }
        if hedged {
            return self.err(
                &key,
                "limits with hedging are not modelled: a strategy may set one of limits and \
                 hedging",
            );
        }
        let d = PoolLimits::ENVOY;
        // No waiting place is a limit Envoy users set (fail at once when
        // every connection is busy); no connection or request fails all.
        let limit = |name: &str, v: Option<u32>, default: u32, least: u32| {
            let v = v.unwrap_or(default);
            self.ensure(v >= least, &key.join(name), || {
                format!(
                    "{name} must be at least {least} (Envoy's default is {default}; a limit of 0 \
                     would fail every request), got {v}"
                )
            })
            .map(|()| v)
        };
        Ok(Some(PoolLimits {
            max_connections: limit("max_connections", f.max_connections, d.max_connections, 1)?,
            max_pending_requests: limit(
                "max_pending_requests",
                f.max_pending_requests,
                d.max_pending_requests,
                0,
            )?,
            max_requests: limit("max_requests", f.max_requests, d.max_requests, 1)?,
            http2: f.http2.unwrap_or(d.http2),
        }))
    }
}
