//! The margin LP of one row (`docs/PROOFS.md` L3, L4), shared by every upper-bound search.
//!
//! A row is described by "classes" of tokens: each class has a level `s = <q, z>` and carries
//! an affine kernel expression `k` and value moment `w` (the same for every token of the class,
//! so a class may be one token or a whole orbit of tokens under the stabilizer of `q`, L5).
//! For every least level `tau` of a multiset, the L4 reduction needs only:
//! `mu_tau <= L_b(tau)` for every class `b` at level `>= tau` and
//! `L_q(tau) + L_a(tau) + (N - 2) mu_tau >= delta` for every class `a` at level `tau`,
//! and the same with `R`. Here `L = w - (tau - 1/2) k`, `R = (tau + 1/2) k - w`. With `N - 2 >= 0`
//! copies the minimum over `b` is exactly what `mu_tau` (free, pushed up by the constraints)
//! represents, so the LP is exact, not a relaxation, and has `O(classes * levels)` rows.

use good_lp::{Constraint, Expression, ProblemVariables, Variable};

/// One class of tokens of a row: its level and its affine `k`, `w` expressions.
pub struct RowClass {
    /// `<q, z>` for the tokens of the class.
    pub level: u32,
    /// Kernel value `K(q, z)` of each token in the class.
    pub k: Expression,
    /// Moment `K(q, z) G(q, z)` of each token in the class.
    pub w: Expression,
}

/// Which side of the target an `L4` constraint guards.
#[derive(Clone, Copy)]
enum Side {
    Low,
    High,
}

fn term(c: &RowClass, tau: u32, side: Side) -> Expression {
    let t = tau as f64;
    match side {
        // w - (tau - 1/2) k > 0 keeps the output above tau - 1/2.
        Side::Low => c.w.clone() - (t - 0.5) * c.k.clone(),
        // (tau + 1/2) k - w > 0 keeps it below tau + 1/2.
        Side::High => (t + 0.5) * c.k.clone() - c.w.clone(),
    }
}

/// Adds the margin constraints of one row to `cons`: every multiset `{q} + (N - 1 others)`
/// has both sums `>= delta` (times `scale`, a per-row positive constant).
/// `own` is the index of the class holding the query token alone; `weight` is `|q|`.
#[allow(clippy::too_many_arguments)]
pub fn add_row_constraints(
    vars: &mut ProblemVariables,
    cons: &mut Vec<Constraint>,
    classes: &[RowClass],
    own: usize,
    weight: u32,
    length: usize,
    delta: Variable,
    scale: f64,
) {
    let taus: Vec<u32> = if length == 1 {
        vec![weight]
    } else {
        (0..=weight).collect()
    };
    for tau in taus {
        for side in [Side::Low, Side::High] {
            let own_term = term(&classes[own], tau, side);
            if length == 1 {
                cons.push((own_term - scale * delta).geq(0.0));
                continue;
            }
            let mu: Option<Variable> = (length > 2).then(|| vars.add(good_lp::variable()));
            for c in classes {
                if c.level < tau {
                    continue;
                }
                let t = term(c, tau, side);
                if let Some(mu) = mu {
                    cons.push((t.clone() - mu).geq(0.0));
                }
                if c.level == tau {
                    let mut lhs = own_term.clone() + t - scale * delta;
                    if let Some(mu) = mu {
                        lhs += (length - 2) as f64 * mu;
                    }
                    cons.push(lhs.geq(0.0));
                }
            }
        }
    }
}

/// Solves a maximization with HiGHS on one thread, silently; returns `None` unless optimal.
pub fn solve_max(
    vars: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
) -> Option<good_lp::solvers::highs::HighsSolution> {
    solve_max_until(vars, objective, cons, None)
}

/// The LP of one row alone: the constraints `cons` and the row's margin constraints over
/// `classes` ([`add_row_constraints`] at scale 1), maximising the margin `delta`.
pub fn solve_row_margin(
    mut vars: ProblemVariables,
    mut cons: Vec<Constraint>,
    classes: &[RowClass],
    own: usize,
    weight: u32,
    length: usize,
    delta: Variable,
) -> Option<good_lp::solvers::highs::HighsSolution> {
    add_row_constraints(
        &mut vars, &mut cons, classes, own, weight, length, delta, 1.0,
    );
    solve_max(vars, Expression::from(delta), cons)
}

/// As [`solve_max`], giving up (`None`) at `deadline`: HiGHS gets the remaining time as its
/// own limit, so one large LP cannot overrun a search's time budget.
pub fn solve_max_until(
    vars: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
    deadline: Option<std::time::Instant>,
) -> Option<good_lp::solvers::highs::HighsSolution> {
    solve(vars, objective, cons, deadline, false)
}

/// As [`solve_max_until`] by HiGHS's interior-point method without crossover: an optimal
/// point inside the optimal face rather than a vertex, and on the large, degenerate LPs of the
/// joint steps ([`crate::search::upper::joint`]) much faster than the simplex method.
pub fn solve_max_interior_until(
    vars: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
    deadline: Option<std::time::Instant>,
) -> Option<good_lp::solvers::highs::HighsSolution> {
    solve(vars, objective, cons, deadline, true)
}

fn solve(
    vars: ProblemVariables,
    objective: Expression,
    cons: Vec<Constraint>,
    deadline: Option<std::time::Instant>,
    interior: bool,
) -> Option<good_lp::solvers::highs::HighsSolution> {
    use good_lp::solvers::highs::HighsSolverType;
    use good_lp::{Solution, SolutionStatus, SolverModel};
    let mut model = vars
        .maximise(objective)
        .using(good_lp::solvers::highs::highs)
        .set_threads(1);
    if interior {
        model = model
            .set_solver(HighsSolverType::Ipm)
            .set_option("run_crossover", "off");
    }
    if let Some(d) = deadline {
        let left = d
            .saturating_duration_since(std::time::Instant::now())
            .as_secs_f64();
        if left <= 0.0 {
            return None;
        }
        model = model.set_time_limit(left);
    }
    model.set_verbose(false);
    for c in cons {
        model = model.with(c);
    }
    let sol = model.solve().ok()?;
    matches!(sol.status(), SolutionStatus::Optimal).then_some(sol)
}
