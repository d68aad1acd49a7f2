//! Which rank the training engine tries next when no `--rank` is given.
//!
//! Going down one rank at a time from the structured model (rank 18 at `m = 9`, 20 at
//! `m = 10`) spends a whole training run per rank, and at `m >= 9` a ten-minute budget ends far
//! above the ranks that training reaches when it is aimed at them (`docs/BENCHMARKS.md`). So
//! the schedule first *probes*: it tries the middle of the open interval with one batch of
//! random restarts, keeps the result if it passes, and otherwise tries above it. A failed probe
//! proves nothing, so once no probe is left the schedule *steps* down one rank at a time from
//! the best model, with its descent starts and every restart, below the failed probes too, until
//! a step fails, as before. Only certified lower bounds stop it for good. A run over a range of
//! `m` first tries, once, the rank one above the best model of `m - 1` from that model lifted
//! ([`super::train::FloatModel::lifted`]): where it passes, it lands at once where the probes
//! would have taken several batches.

/// The next search of the training engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Try {
    /// The rank to search.
    pub rank: usize,
    /// What kind of search.
    pub kind: TryKind,
}

/// The kinds of search of the rank schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryKind {
    /// The lifted model of `m - 1` alone, no random restart; tried once, first.
    Lift,
    /// One batch of random restarts, below the rank just under the best.
    Probe,
    /// The rank just under the best: the descent starts and every restart.
    Step,
}

/// The state of the rank schedule: everything below `floor` is refuted (or below the
/// requested rank), probes go no lower than `probe_floor`, `best` is the best rank certified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankSchedule {
    floor: usize,
    probe_floor: usize,
    best: usize,
    probes: bool,
    lift: Option<usize>,
}

impl RankSchedule {
    /// Steps down from `best` (exclusive) to `floor` (inclusive), probing first when `probes`
    /// is set; `probe_floor` is where an interrupted run's probes had got to.
    pub fn new(floor: usize, best: usize, probes: bool, probe_floor: Option<usize>) -> Self {
        let floor = floor.max(1);
        RankSchedule {
            floor,
            probe_floor: probe_floor.unwrap_or(floor).max(floor),
            best,
            probes,
            lift: None,
        }
    }

    /// Tries rank `rank` first, from a lifted model ([`TryKind::Lift`]), if it lies between
    /// the floor and the best.
    pub fn with_lift(mut self, rank: usize) -> Self {
        self.lift = Some(rank);
        self
    }

    /// The rank to try next, or `None` when every rank below the best is refuted.
    pub fn next(&self) -> Option<Try> {
        let top = self.best.checked_sub(1)?;
        if top < self.floor {
            return None;
        }
        if let Some(rank) = self.lift.filter(|r| (self.floor..=top).contains(r)) {
            return Some(Try {
                rank,
                kind: TryKind::Lift,
            });
        }
        if self.probes && top >= self.probe_floor + 2 {
            // The middle of [probe_floor, top], rounded up: success is likelier near the top.
            let rank = self.probe_floor + (top - self.probe_floor).div_ceil(2);
            return Some(Try {
                rank,
                kind: TryKind::Probe,
            });
        }
        Some(Try {
            rank: top,
            kind: TryKind::Step,
        })
    }

    /// A model of rank `rank` was certified.
    pub fn found(&mut self, rank: usize) {
        self.best = self.best.min(rank);
        self.lift = None;
    }

    /// The search of `t` found nothing: a failed lift is not tried again, a failed probe
    /// raises the probe floor above it, a failed step ends the schedule.
    pub fn failed(&mut self, t: Try) {
        match t.kind {
            TryKind::Lift => self.lift = None,
            TryKind::Probe => self.probe_floor = self.probe_floor.max(t.rank + 1),
            TryKind::Step => self.floor = self.best,
        }
    }

    /// The probe floor, for the checkpoint.
    pub fn probe_floor(&self) -> usize {
        self.probe_floor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the schedule against a search that succeeds exactly at ranks `>= least` and
    /// returns the ranks tried in order.
    fn trace(floor: usize, best: usize, probes: bool, least: usize) -> Vec<Try> {
        trace_of(RankSchedule::new(floor, best, probes, None), least)
    }

    /// [`trace`] of a given schedule.
    fn trace_of(mut s: RankSchedule, least: usize) -> Vec<Try> {
        let mut tried = Vec::new();
        while let Some(t) = s.next() {
            assert!(tried.len() < 64, "the schedule must end");
            tried.push(t);
            if t.rank >= least {
                s.found(t.rank);
            } else {
                s.failed(t);
            }
        }
        tried
    }

    #[test]
    fn without_probes_it_steps_down_until_a_step_fails() {
        let ranks: Vec<usize> = trace(4, 9, false, 6).iter().map(|t| t.rank).collect();
        assert_eq!(ranks, vec![8, 7, 6, 5]);
    }

    #[test]
    fn probes_halve_the_interval_and_steps_finish_the_descent() {
        let t = trace(4, 18, true, 9);
        let ranks: Vec<usize> = t.iter().map(|t| t.rank).collect();
        // Probes: 11 passes, 7 fails, 9 passes; then the step to 8 fails and ends the search.
        assert_eq!(ranks, vec![11, 7, 9, 8]);
        assert!(t[..3].iter().all(|t| t.kind == TryKind::Probe));
        assert_eq!(t[3].kind, TryKind::Step);
    }

    #[test]
    fn the_least_passing_rank_is_always_found() {
        // Whatever the interval and the least rank that passes, the schedule ends at it: a
        // failed probe never stops the steps below it.
        for floor in 1..6 {
            for best in floor + 1..20 {
                for least in floor..best {
                    let t = trace(floor, best, true, least);
                    let found = t.iter().filter(|t| t.rank >= least).map(|t| t.rank).min();
                    assert_eq!(
                        found,
                        Some(least),
                        "floor {floor} best {best} least {least}"
                    );
                    // The last try is the failing step just below it, unless it is the floor.
                    let last = t.last().copied();
                    if least > floor {
                        assert_eq!(
                            last,
                            Some(Try {
                                rank: least - 1,
                                kind: TryKind::Step
                            })
                        );
                    } else {
                        assert_eq!(last.map(|t| t.rank), Some(least));
                    }
                }
            }
        }
    }

    #[test]
    fn a_lift_is_tried_first_and_once() {
        let ranks = |t: &[Try]| t.iter().map(|t| (t.rank, t.kind)).collect::<Vec<_>>();
        use TryKind::{Lift, Probe, Step};
        // The lift passes at 9: the probes then halve [4, 8].
        let t = trace_of(RankSchedule::new(4, 18, true, None).with_lift(9), 6);
        assert_eq!(
            ranks(&t),
            vec![(9, Lift), (6, Probe), (5, Step)],
            "lift 9 passes, probe 6 passes, step 5 fails"
        );
        // The lift fails at 7: the schedule goes on as without it, and never lifts again.
        let t = trace_of(RankSchedule::new(4, 18, true, None).with_lift(7), 9);
        assert_eq!(
            t[0],
            Try {
                rank: 7,
                kind: Lift
            }
        );
        assert_eq!(&t[1..], &trace(4, 18, true, 9)[..]);
        // A lift at or above the best, or below the floor, is not tried.
        for lift in [3, 18, 25] {
            assert_eq!(
                trace_of(RankSchedule::new(4, 18, true, None).with_lift(lift), 9),
                trace(4, 18, true, 9)
            );
        }
        // Nor after a certificate has been found some other way.
        let mut s = RankSchedule::new(4, 18, true, None).with_lift(9);
        s.found(12);
        assert_eq!(s.next().map(|t| t.kind), Some(Probe));
    }

    #[test]
    fn nothing_is_tried_below_the_floor_or_at_the_best() {
        assert_eq!(RankSchedule::new(5, 5, true, None).next(), None);
        assert_eq!(RankSchedule::new(5, 0, true, None).next(), None);
        for t in trace(3, 12, true, 1) {
            assert!((3..12).contains(&t.rank));
        }
    }

    #[test]
    fn a_resumed_schedule_keeps_its_probe_floor() {
        let s = RankSchedule::new(4, 18, true, Some(12));
        assert_eq!(
            s.next(),
            Some(Try {
                rank: 15,
                kind: TryKind::Probe
            })
        );
        assert_eq!(s.probe_floor(), 12);
    }
}
