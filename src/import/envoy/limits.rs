//! An Envoy cluster's connection limits (its circuit breakers' thresholds
//! at DEFAULT priority) as a scenario's `limits`.

use super::wrapped;
use crate::import::{Ctx, Entry, ImportError, Node, entry};

/// Whether a cluster's connections speak HTTP/2 (`http2_protocol_options`,
/// at the cluster or in its typed protocol options): many requests on one.
pub(super) fn speaks_http2(c: &Node) -> bool {
    fn has(n: &Node) -> bool {
        n.entries()
            .iter()
            .any(|(k, v)| k == "http2_protocol_options" || has(v))
            || n.items().iter().any(has)
    }
    c.get("http2_protocol_options").is_some()
        || c.get("typed_extension_protocol_options").is_some_and(has)
}

/// Envoy's default thresholds as a scenario's `limits`.
pub(super) fn default_limits(http2: bool) -> String {
    let h2 = if http2 { ", http2 = true" } else { "" };
    format!("{{ max_connections = 1024, max_pending_requests = 1024, max_requests = 1024{h2} }}")
}

/// A DEFAULT-priority threshold's connection limits as a scenario's
/// `limits`, each absent one at Envoy's default 1024.
pub(super) fn pool_limits(
    ctx: &mut Ctx,
    t: &Node,
    f: &str,
    http2: bool,
) -> Result<Entry, ImportError> {
    let mut keys = Vec::new();
    let mut from = Vec::new();
    for (k, least) in [
        ("max_connections", 1),
        ("max_pending_requests", 0),
        ("max_requests", 1),
    ] {
        match t.get(k) {
            Some(v) => {
                let fk = format!("{f}.{k}");
                let n = wrapped(ctx, v, &fk)?;
                if n.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&n) {
                    return Err(ctx.err(v, &fk, "a whole number, 0 to 4294967295"));
                }
                if n < f64::from(least) {
                    ctx.not_modelled(v, &fk, crate::import::ZERO_LIMIT);
                    keys.push(format!("{k} = 1024"));
                    from.push(format!("{k} = 0 left out: Envoy's default 1024"));
                    continue;
                }
                keys.push(format!("{k} = {}", n as u64));
                from.push(ctx.from(v.get("value").unwrap_or(v), &fk));
            }
            None => {
                keys.push(format!("{k} = 1024"));
                from.push(format!("{k} absent: Envoy's default 1024"));
            }
        }
    }
    if http2 {
        keys.push("http2 = true".into());
        from.push("the cluster speaks HTTP/2 (http2_protocol_options)".into());
    }
    Ok(entry(
        "limits",
        format!("{{ {} }}", keys.join(", ")),
        format!("{} ({})", from.join("; "), crate::import::PER_PROXY),
    ))
}
