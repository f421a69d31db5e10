//! The attempts a call chain's tiers make under total failure: each tier's
//! attempts multiply those of its callers.

use super::limits::attempts_per_request;
use super::value::{Bound, bound, short};
use crate::model::chain::{ChainConfig, topological};
use crate::retry::Strategy;

/// Attempts reaching each tier of `chain` per user request when that tier
/// fails every attempt (and so every tier above it), with no budget capping:
/// `W(k) = (1 + r_k) x sum over callers b of (calls b makes to k) x
/// (their probability) x W(b)`, `W(0) = 1 + r_0`, with each tier's formula.
/// (With calls made only sometimes, a caller's attempt that leaves out its
/// failing call succeeds: the bound is then above what happens.)
pub fn chain(chain: &ChainConfig, users: &Strategy) -> Vec<Bound> {
    let n = chain.tiers();
    let retries: Vec<f64> = (0..n)
        .map(|k| {
            let s = if k == 0 {
                users
            } else {
                &users.tiers[k - 1].strategy
            };
            attempts_per_request(s).value
        })
        .collect();
    // Attempts at each tier, and the calls into it, with their formulas.
    let (mut a, mut calls_in) = (vec![0.0f64; n], vec![0.0f64; n]);
    let (mut fa, mut fin) = (vec![String::new(); n], vec![String::new(); n]);
    // Tiers whose attempts are unbounded because a tier on the way retries
    // without limit (not because the product outgrew a float).
    let (mut unlimited, mut unlimited_in) = (vec![false; n], vec![false; n]);
    let factor = |r: f64| {
        if r.is_infinite() {
            "unlimited".to_owned()
        } else {
            short(r)
        }
    };
    for k in topological(&chain.calls) {
        unlimited[k] = retries[k].is_infinite() || unlimited_in[k];
        if k == 0 {
            a[0] = retries[0];
            fa[0] = factor(retries[0]);
            // Shown alone, tier 0's formula says where its number comes from.
            fin[0] = "the users' attempts per request".into();
        } else {
            a[k] = retries[k] * calls_in[k];
            fa[k] = if fin[k].contains('+') {
                format!("{} x ({})", factor(retries[k]), fin[k])
            } else {
                format!("{} x {}", factor(retries[k]), fin[k])
            };
        }
        for (j, &c) in chain.calls[k].to.iter().enumerate() {
            unlimited_in[c] |= unlimited[k];
            let p = chain.calls[k].probability.get(j).copied().unwrap_or(1.0);
            calls_in[c] += p * a[k];
            let term = if p < 1.0 {
                format!("{} x {}", short(p), fa[k])
            } else {
                fa[k].clone()
            };
            if !fin[c].is_empty() {
                fin[c].push_str(" + ");
            }
            fin[c].push_str(&term);
        }
    }
    (0..n)
        .map(|k| {
            let formula = if k == 0 {
                format!("{} ({})", fa[0], fin[0])
            } else {
                fa[k].clone()
            };
            let shown = if unlimited[k] {
                "unlimited attempts".to_owned()
            } else {
                format!("{} attempts", short(a[k]))
            };
            bound(chain.name(k), a[k], shown, formula)
        })
        .collect()
}
