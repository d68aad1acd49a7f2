//! Which rank the training engine tries next when no `--rank` is given.
//!
//! Going down one rank at a time from the structured model (rank 18 at `m = 9`, 20 at
//! `m = 10`) spends a whole training run per rank, and at `m >= 9` a ten-minute budget ends far
//! above the ranks that training reaches when it is aimed at them (`docs/BENCHMARKS.md`). So
//! the schedule first *probes*: it tries the middle of the open interval with one batch of
//! random restarts, keeps the result if it passes, and otherwise tries above it. A failed probe
//! proves nothing, so once no probe is left the schedule *steps* down one rank at a time from
//! the best model, with its descent starts and every restart, below the failed probes too, until
//! a step fails, as before. Only certified lower bounds stop it for good.

/// The next search of the training engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Try {
    /// The rank to search.
    pub rank: usize,
    /// A probe (one batch of random restarts, below the rank just under the best) or a step
    /// (the rank just under the best, every restart and the descent starts).
    pub probe: bool,
}

/// The state of the rank schedule: everything below `floor` is refuted (or below the
/// requested rank), probes go no lower than `probe_floor`, `best` is the best rank certified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankSchedule {
    floor: usize,
    probe_floor: usize,
    best: usize,
    probes: bool,
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
        }
    }

    /// The rank to try next, or `None` when every rank below the best is refuted.
    pub fn next(&self) -> Option<Try> {
        let top = self.best.checked_sub(1)?;
        if top < self.floor {
            return None;
        }
        if self.probes && top >= self.probe_floor + 2 {
            // The middle of [probe_floor, top], rounded up: success is likelier near the top.
            let rank = self.probe_floor + (top - self.probe_floor).div_ceil(2);
            return Some(Try { rank, probe: true });
        }
        Some(Try {
            rank: top,
            probe: false,
        })
    }

    /// A model of rank `rank` was certified.
    pub fn found(&mut self, rank: usize) {
        self.best = self.best.min(rank);
    }

    /// The search of `t` found nothing: a failed probe raises the probe floor above it, a
    /// failed step ends the schedule.
    pub fn failed(&mut self, t: Try) {
        if t.probe {
            self.probe_floor = self.probe_floor.max(t.rank + 1);
        } else {
            self.floor = self.best;
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
        let mut s = RankSchedule::new(floor, best, probes, None);
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
        assert!(t[..3].iter().all(|t| t.probe));
        assert!(!t[3].probe);
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
                                probe: false
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
                probe: true
            })
        );
        assert_eq!(s.probe_floor(), 12);
    }
}
