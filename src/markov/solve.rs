//! The chain's linear systems, each solved by faer's sparse LU: the
//! stationary distribution, the expected time to leave the bad mode, and
//! the committor (the probability of reaching the bad mode first).

use faer::prelude::*;
use faer::sparse::{SparseColMat, Triplet};

use super::Chain;

/// Solves `A x = b` for the sparse `A` given as (row, column, value)
/// triplets (duplicates summed).
fn solve(n: usize, triplets: &[Triplet<usize, usize, f64>], b: &[f64]) -> Result<Vec<f64>, String> {
    let a = SparseColMat::<usize, f64>::try_new_from_triplets(n, n, triplets)
        .map_err(|e| format!("cannot build the chain's matrix: {e:?}"))?;
    let lu = a
        .sp_lu()
        .map_err(|e| format!("cannot factor the chain's matrix: {e:?}"))?;
    let rhs = Col::<f64>::from_fn(n, |i| b[i]);
    let x = lu.solve(&rhs);
    let out: Vec<f64> = (0..n).map(|i| x[i]).collect();
    if out.iter().all(|v| v.is_finite()) {
        Ok(out)
    } else {
        Err("the chain's linear system is singular".into())
    }
}

/// Every state's moves, as (from, to, rate), and each state's total rate out.
fn generator(c: &Chain) -> (Vec<(usize, usize, f64)>, Vec<f64>) {
    let k = c.params.capacity as usize;
    let mut moves = Vec::new();
    let mut out = vec![0.0; c.states()];
    let mut buf = Vec::new();
    for r in 0..=c.r_max {
        for n in 0..=k {
            let i = c.index(n, r);
            c.moves(n, r, &mut buf);
            for &(n2, r2, rate) in &buf {
                moves.push((i, c.index(n2, r2), rate));
                out[i] += rate;
            }
        }
    }
    (moves, out)
}

/// The stationary distribution: `pi Q = 0`, with `pi` of state 0 set to 1
/// (its equation dropped, the rest solved), then normalised.
pub(super) fn stationary(c: &Chain) -> Result<Vec<f64>, String> {
    let n = c.states();
    let (moves, out) = generator(c);
    // Unknowns: pi of states 1..n, as 0..n-1. Equation j (for state j >= 1):
    // sum_i pi_i Q[i][j] = 0, with pi_0 = 1 moved to the right.
    let mut triplets = Vec::with_capacity(moves.len() + n);
    let mut b = vec![0.0; n - 1];
    for &(i, j, rate) in &moves {
        if j == 0 {
            continue;
        }
        if i == 0 {
            b[j - 1] -= rate;
        } else {
            triplets.push(Triplet::new(j - 1, i - 1, rate));
        }
    }
    for (i, &o) in out.iter().enumerate().skip(1) {
        triplets.push(Triplet::new(i - 1, i - 1, -o));
    }
    let x = solve(n - 1, &triplets, &b)?;
    let mut pi = Vec::with_capacity(n);
    pi.push(1.0);
    pi.extend(x.into_iter().map(|v| v.max(0.0)));
    let total: f64 = pi.iter().sum();
    Ok(pi.into_iter().map(|v| v / total).collect())
}

/// Expected seconds to reach a state whose `n` is `target`, from every
/// state (0 there).
pub(super) fn time_to(c: &Chain, target: &dyn Fn(usize) -> bool) -> Result<Vec<f64>, String> {
    let k = c.params.capacity as usize;
    let inside = |i: usize| !target(i % (k + 1));
    restricted(c, &inside, |_| 0.0, &|_| 1.0)
}

/// The probability of reaching `n >= bad` before `n <= good`, from every
/// state.
pub(super) fn committor(c: &Chain, good: usize, bad: usize) -> Result<Vec<f64>, String> {
    let k = c.params.capacity as usize;
    let level = |i: usize| i % (k + 1);
    let inside = |i: usize| level(i) > good && level(i) < bad;
    restricted(
        c,
        &inside,
        |i| if level(i) >= bad { 1.0 } else { 0.0 },
        &|_| 0.0,
    )
}

/// Solves, on the states `inside`, `sum_j Q[i][j] x_j = -cost(i)` with `x`
/// fixed to `outside(j)` elsewhere; returns `x` on every state.
fn restricted(
    c: &Chain,
    inside: &dyn Fn(usize) -> bool,
    outside: impl Fn(usize) -> f64,
    cost: &dyn Fn(usize) -> f64,
) -> Result<Vec<f64>, String> {
    let n = c.states();
    let (moves, out) = generator(c);
    let mut slot = vec![usize::MAX; n];
    let mut states = Vec::new();
    for (i, s) in slot.iter_mut().enumerate() {
        if inside(i) {
            *s = states.len();
            states.push(i);
        }
    }
    let mut x: Vec<f64> = (0..n).map(&outside).collect();
    if states.is_empty() {
        return Ok(x);
    }
    let mut triplets = Vec::with_capacity(moves.len());
    let mut b: Vec<f64> = states.iter().map(|&i| -cost(i)).collect();
    for &(i, j, rate) in &moves {
        if slot[i] == usize::MAX {
            continue;
        }
        if slot[j] == usize::MAX {
            b[slot[i]] -= rate * x[j];
        } else {
            triplets.push(Triplet::new(slot[i], slot[j], rate));
        }
    }
    for &i in &states {
        triplets.push(Triplet::new(slot[i], slot[i], -out[i]));
    }
    let solved = solve(states.len(), &triplets, &b)?;
    for (&i, v) in states.iter().zip(solved) {
        x[i] = v;
    }
    Ok(x)
}
