//! Leader election: one behaviour per test, then a model run of three nodes over a
//! conditional-write store with delays, lost answers, pauses and clock drift, checked
//! against the rule "at no instant do two nodes believe they lead".

use lake_core::commit::WriteOutcome;
use lake_core::election::{
    Election, ElectionConfig, ElectionInput as In, ElectionOutput as Out, Fence, Lease,
};
use proptest::prelude::*;

const LEASE: i64 = 2_000;
const RENEW: i64 = 500;
const BOUND: i64 = 200;

fn config(node: &str) -> ElectionConfig {
    ElectionConfig {
        node: node.into(),
        address: format!("{node}:7000"),
        lease_ms: LEASE,
        renew_interval_ms: RENEW,
        clock_bound_ms: BOUND,
        exclusive: false,
    }
}

fn drain(e: &mut Election) -> Vec<Out> {
    std::iter::from_fn(|| e.poll()).collect()
}

fn lease(epoch: u64, holder: &str, renewal: u64) -> Lease {
    Lease {
        epoch,
        holder: holder.into(),
        address: format!("{holder}:7000"),
        renewal,
    }
}

/// Drives a fresh node to leadership of epoch 1 at time 0.
fn elected(node: &str) -> Election {
    let mut e = Election::new(config(node)).unwrap();
    e.handle(In::Tick, 0);
    assert_eq!(drain(&mut e), vec![Out::ReadLease]);
    e.handle(In::LeaseRead(None), 0);
    let out = drain(&mut e);
    assert_eq!(
        out,
        vec![Out::WriteLease {
            write_id: 1,
            expected: None,
            lease: lease(1, node, 0)
        }]
    );
    e.handle(In::LeaseWritten { write_id: 1 }, 10);
    assert_eq!(drain(&mut e), vec![Out::Elected { epoch: 1 }]);
    e
}

#[test]
fn first_node_takes_epoch_one_when_no_lease_exists() {
    let e = elected("a");
    assert_eq!(e.leading(10), Some(1));
    assert_eq!(
        e.fence(10),
        Some(Fence {
            epoch: 1,
            holder: "a".into()
        })
    );
    assert_eq!(e.leader().map(|l| l.address.as_str()), Some("a:7000"));
}

#[test]
fn leader_renews_with_a_write_conditioned_on_its_current_record() {
    let mut e = elected("a");
    assert_eq!(e.next_deadline_ms(), RENEW);
    e.handle(In::Tick, RENEW);
    let out = drain(&mut e);
    assert_eq!(
        out,
        vec![Out::WriteLease {
            write_id: 2,
            expected: Some(lease(1, "a", 0)),
            lease: lease(1, "a", 1)
        }]
    );
    e.handle(In::LeaseWritten { write_id: 2 }, RENEW + 5);
    // Valid until the renewal's send time + lease - bound.
    assert_eq!(e.leading(RENEW + LEASE - BOUND - 1), Some(1));
    assert_eq!(e.leading(RENEW + LEASE - BOUND), None);
}

#[test]
fn leader_without_confirmed_renewals_stops_leading_before_the_lease_can_expire() {
    let mut e = elected("a");
    // Renewals are sent but never answered: leadership ends at lease - bound after the
    // last confirmed write (sent at 0), announced once.
    let mut stepped_down_at = None;
    let mut now = 0;
    while now < 2 * LEASE {
        now += 100;
        assert_eq!(
            e.leading(now),
            (now < LEASE - BOUND).then_some(1),
            "at {now} ms"
        );
        e.handle(In::Tick, now);
        if drain(&mut e).contains(&Out::SteppedDown { epoch: 1 }) {
            assert_eq!(stepped_down_at, None, "stepped down twice");
            stepped_down_at = Some(now);
        }
    }
    assert_eq!(stepped_down_at, Some(LEASE - BOUND));
}

/// Makes follower `b` read `record` at `now` and returns its outputs.
fn read(e: &mut Election, record: Option<Lease>, now: i64) -> Vec<Out> {
    e.handle(In::Tick, now);
    let out = drain(e);
    if !out.contains(&Out::ReadLease) {
        return out;
    }
    e.handle(In::LeaseRead(record), now);
    drain(e)
}

#[test]
fn follower_waits_while_the_holder_renews_and_takes_over_an_unchanged_lease() {
    let mut b = Election::new(config("b")).unwrap();
    // The holder renews every RENEW ms: b never writes.
    let mut now = 0;
    for renewal in 0..20 {
        let out = read(&mut b, Some(lease(1, "a", renewal)), now);
        assert!(
            !out.iter().any(|o| matches!(o, Out::WriteLease { .. })),
            "took over a live lease: {out:?}"
        );
        now += RENEW;
    }
    // The holder stops renewing: b first sees renewal 19 at `seen`, and takes over only
    // once that record stayed unchanged for lease + bound of its own time.
    let seen = now - RENEW;
    let mut took_over_at = None;
    while took_over_at.is_none() {
        now += 50;
        let out = read(&mut b, Some(lease(1, "a", 19)), now);
        if let Some(Out::WriteLease {
            expected, lease: l, ..
        }) = out.first()
        {
            assert_eq!(expected, &Some(lease(1, "a", 19)));
            assert_eq!(l, &lease(2, "b", 0));
            took_over_at = Some(now);
        }
    }
    assert!(took_over_at.unwrap() >= seen + LEASE + BOUND);
    assert_eq!(b.leader().map(|l| l.holder.as_str()), Some("a"));
}

#[test]
fn lost_takeover_race_rereads_and_follows_the_winner() {
    let mut b = Election::new(config("b")).unwrap();
    read(&mut b, Some(lease(1, "a", 0)), 0);
    let out = read(&mut b, Some(lease(1, "a", 0)), LEASE + BOUND);
    let Some(Out::WriteLease { write_id, .. }) = out.first().cloned() else {
        panic!("{out:?}")
    };
    b.handle(
        In::LeaseWriteFailed {
            write_id,
            outcome: WriteOutcome::NotWritten,
        },
        LEASE + BOUND + 5,
    );
    assert_eq!(drain(&mut b), vec![Out::ReadLease]);
    b.handle(In::LeaseRead(Some(lease(2, "c", 0))), LEASE + BOUND + 6);
    assert!(drain(&mut b).is_empty());
    assert_eq!(b.leading(LEASE + BOUND + 6), None);
    assert_eq!(b.leader().map(|l| l.holder.as_str()), Some("c"));
}

#[test]
fn unknown_takeover_outcome_is_settled_by_reading_the_record() {
    let mut b = Election::new(config("b")).unwrap();
    read(&mut b, None, 0);
    b.handle(
        In::LeaseWriteFailed {
            write_id: 1,
            outcome: WriteOutcome::Unknown,
        },
        100,
    );
    assert_eq!(drain(&mut b), vec![Out::ReadLease]);
    // The write had applied: b leads, counting from when it sent the write (time 0).
    b.handle(In::LeaseRead(Some(lease(1, "b", 0))), 150);
    assert_eq!(drain(&mut b), vec![Out::Elected { epoch: 1 }]);
    assert_eq!(b.leading(LEASE - BOUND - 1), Some(1));
    assert_eq!(b.leading(LEASE - BOUND), None);
}

#[test]
fn leader_whose_renewal_is_refused_steps_down_once_it_sees_another_holder() {
    let mut a = elected("a");
    a.handle(In::Tick, RENEW);
    let _ = drain(&mut a);
    a.handle(
        In::LeaseWriteFailed {
            write_id: 2,
            outcome: WriteOutcome::NotWritten,
        },
        RENEW + 1,
    );
    assert_eq!(drain(&mut a), vec![Out::ReadLease]);
    // Still the holder (the refusal was throttling): it keeps leading and renews again.
    a.handle(In::LeaseRead(Some(lease(1, "a", 0))), RENEW + 2);
    assert!(matches!(drain(&mut a).as_slice(), [Out::WriteLease { .. }]));
    assert_eq!(a.leading(RENEW + 2), Some(1));
    a.handle(
        In::LeaseWriteFailed {
            write_id: 3,
            outcome: WriteOutcome::NotWritten,
        },
        RENEW + 3,
    );
    let _ = drain(&mut a);
    a.handle(In::LeaseRead(Some(lease(2, "b", 0))), RENEW + 4);
    assert_eq!(drain(&mut a), vec![Out::SteppedDown { epoch: 1 }]);
    assert_eq!(a.leading(RENEW + 4), None);
    assert_eq!(a.fence(RENEW + 4), None);
}

#[test]
fn late_answers_and_answers_to_other_writes_are_ignored() {
    let mut a = elected("a");
    a.handle(In::LeaseWritten { write_id: 99 }, 20);
    a.handle(In::LeaseRead(Some(lease(7, "z", 0))), 20);
    assert!(drain(&mut a).is_empty());
    assert_eq!(a.leading(20), Some(1));
}

#[test]
fn resign_steps_down_and_releases_the_lease_for_an_immediate_takeover() {
    let mut a = elected("a");
    a.handle(In::Resign, 20);
    let released = Lease {
        epoch: 1,
        holder: String::new(),
        address: String::new(),
        renewal: 1,
    };
    assert_eq!(
        drain(&mut a),
        vec![
            Out::SteppedDown { epoch: 1 },
            Out::WriteLease {
                write_id: 2,
                expected: Some(lease(1, "a", 0)),
                lease: released.clone()
            }
        ]
    );
    assert_eq!(a.leading(20), None);
    assert!(released.is_released());
    assert!(!lease(1, "a", 0).fence().admits(Some(&released)));
    // A resigned node stays out: no renewals, no reads, no takeovers.
    a.handle(In::LeaseWritten { write_id: 2 }, 30);
    a.handle(In::Tick, 10 * LEASE);
    assert!(drain(&mut a).is_empty());
    assert_eq!(a.leading(10 * LEASE), None);
    // Another node takes a released lease over without waiting for it to expire.
    let mut b = Election::new(config("b")).unwrap();
    let out = read(&mut b, Some(released.clone()), 40);
    assert_eq!(
        out,
        vec![Out::WriteLease {
            write_id: 1,
            expected: Some(released),
            lease: lease(2, "b", 0)
        }]
    );
}

#[test]
fn fence_admits_only_the_same_epoch_and_holder() {
    let fence = lease(3, "a", 5).fence();
    assert!(fence.admits(Some(&lease(3, "a", 9))));
    assert!(!fence.admits(Some(&lease(4, "a", 0))));
    assert!(!fence.admits(Some(&lease(3, "b", 0))));
    assert!(!fence.admits(None));
}

#[test]
fn config_relations_are_checked_with_a_message_naming_the_setting() {
    let mut c = config("a");
    c.clock_bound_ms = LEASE / 2;
    let err = Election::new(c).unwrap_err();
    assert!(err.contains("clock_bound_ms"), "{err}");
    let mut c = config("a");
    c.renew_interval_ms = LEASE;
    let err = Election::new(c).unwrap_err();
    assert!(err.contains("renew_interval_ms"), "{err}");
}

// ---- model run -------------------------------------------------------------------------

/// A tiny deterministic generator (SplitMix64), so one proptest seed fixes the whole run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

enum Op {
    Read,
    Write {
        write_id: u64,
        expected: Option<Lease>,
        lease: Lease,
    },
}

struct Message {
    node: usize,
    apply_at: i64,
    answer_at: i64,
    lost: bool,
    op: Op,
    answer: Option<In>,
}

struct Node {
    election: Election,
    offset_ms: i64,
    /// Clock rate error in parts per thousand.
    drift_per_mille: i64,
    paused_until: i64,
}

impl Node {
    fn now(&self, t: i64) -> i64 {
        self.offset_ms + t + t * self.drift_per_mille / 1000
    }
}

/// Runs three nodes for `duration` ms of real time; returns the first instant at which two
/// nodes both believed they led, and how many distinct epochs were elected.
fn model_run(seed: u64, max_drift_per_mille: i64, duration: i64) -> (Option<String>, u64) {
    let mut rng = Rng(seed);
    let mut nodes: Vec<Node> = (0..3)
        .map(|i| Node {
            election: Election::new(config(&format!("n{i}"))).unwrap(),
            offset_ms: i64::try_from(rng.below(20_000)).unwrap() - 10_000,
            drift_per_mille: i64::try_from(rng.below(2 * max_drift_per_mille as u64 + 1)).unwrap()
                - max_drift_per_mille,
            paused_until: 0,
        })
        .collect();
    let mut store: Option<Lease> = None;
    let mut messages: Vec<Message> = Vec::new();
    let mut epochs = std::collections::BTreeMap::new();
    let mut t = 0;
    while t < duration {
        t += 1 + i64::try_from(rng.below(40)).unwrap();
        // The store applies requests that reached it.
        for m in messages
            .iter_mut()
            .filter(|m| m.answer.is_none() && m.apply_at <= t)
        {
            m.answer = Some(match &m.op {
                Op::Read => In::LeaseRead(store.clone()),
                Op::Write {
                    write_id,
                    expected,
                    lease,
                } => {
                    if &store == expected && !rng.chance(50) {
                        store = Some(lease.clone());
                        In::LeaseWritten {
                            write_id: *write_id,
                        }
                    } else {
                        In::LeaseWriteFailed {
                            write_id: *write_id,
                            outcome: WriteOutcome::NotWritten,
                        }
                    }
                }
            });
        }
        // Nodes: pauses (a stopped process), answers, ticks.
        for (i, node) in nodes.iter_mut().enumerate() {
            if node.paused_until > t {
                continue;
            }
            if rng.chance(2) {
                node.paused_until = t + i64::try_from(rng.below(3 * LEASE as u64)).unwrap();
                continue;
            }
            let now = node.now(t);
            let mut inputs = vec![In::Tick];
            let mut k = 0;
            while k < messages.len() {
                let m = &messages[k];
                if m.node == i && m.answer.is_some() && m.answer_at <= t {
                    let m = messages.swap_remove(k);
                    match (m.lost, m.op) {
                        (false, _) => inputs.extend(m.answer),
                        // A lost answer to a write is a timeout; a lost read is silence.
                        (true, Op::Write { write_id, .. }) => inputs.push(In::LeaseWriteFailed {
                            write_id,
                            outcome: WriteOutcome::Unknown,
                        }),
                        (true, Op::Read) => {}
                    }
                } else {
                    k += 1;
                }
            }
            for input in inputs {
                node.election.handle(input, now);
                while let Some(out) = node.election.poll() {
                    let delay = 1 + i64::try_from(rng.below(150)).unwrap();
                    let apply_at = t + delay;
                    let answer_at = apply_at + 1 + i64::try_from(rng.below(150)).unwrap();
                    let lost = rng.chance(80);
                    match out {
                        Out::ReadLease => messages.push(Message {
                            node: i,
                            apply_at,
                            answer_at,
                            lost,
                            op: Op::Read,
                            answer: None,
                        }),
                        Out::WriteLease {
                            write_id,
                            expected,
                            lease,
                        } => messages.push(Message {
                            node: i,
                            apply_at,
                            answer_at,
                            lost,
                            op: Op::Write {
                                write_id,
                                expected,
                                lease,
                            },
                            answer: None,
                        }),
                        Out::Elected { epoch } => {
                            if let Some(other) = epochs.insert(epoch, i)
                                && other != i
                            {
                                return (Some(format!("epoch {epoch} elected twice")), 0);
                            }
                        }
                        Out::SteppedDown { .. } => {}
                    }
                }
            }
        }
        // The checker: at real time t, at most one node believes it leads.
        let leaders: Vec<_> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| n.election.leading(n.now(t)).map(|e| (i, e)))
            .collect();
        if leaders.len() > 1 {
            return (Some(format!("two leaders at {t} ms: {leaders:?}")), 0);
        }
    }
    (None, epochs.len() as u64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// With drift inside the configured bound (5% of a 2 s lease is 100 ms < 200 ms), no
    /// two nodes ever lead at once and leadership keeps being re-established.
    #[test]
    fn at_most_one_leader_at_any_instant(seed in any::<u64>()) {
        let (violation, epochs) = model_run(seed, 50, 60_000);
        prop_assert!(violation.is_none(), "{}", violation.unwrap_or_default());
        prop_assert!(epochs >= 1, "nobody was ever elected");
    }
}

/// The checker can fail: with clocks drifting 40% (far past the bound), some seed shows two
/// leaders at once.
#[test]
fn the_checker_catches_clocks_drifting_past_the_bound() {
    let caught = (0..200).any(|seed| model_run(seed, 400, 60_000).0.is_some());
    assert!(caught, "drift far past the bound went unnoticed");
}

/// An exclusive node (the only one over its store: the embedded server).
fn exclusive(node: &str) -> Election {
    let mut e = Election::new(ElectionConfig {
        exclusive: true,
        ..config(node)
    })
    .unwrap();
    e.handle(In::Tick, 0);
    assert_eq!(drain(&mut e), vec![Out::ReadLease]);
    e.handle(In::LeaseRead(None), 0);
    drain(&mut e);
    e.handle(In::LeaseWritten { write_id: 1 }, 10);
    assert_eq!(drain(&mut e), vec![Out::Elected { epoch: 1 }]);
    e
}

#[test]
fn a_starved_exclusive_leader_whose_timers_fire_late_keeps_leading() {
    // The process got no CPU for ten lease periods: its first tick comes that late.
    let late = 10 * LEASE;
    let mut e = exclusive("embedded");
    assert_eq!(
        e.leading(late),
        Some(1),
        "no other node could have taken over"
    );
    e.handle(In::Tick, late);
    let out = drain(&mut e);
    assert!(
        !out.iter().any(|o| matches!(o, Out::SteppedDown { .. })),
        "{out:?}"
    );
    assert!(
        matches!(out.as_slice(), [Out::WriteLease { write_id: 2, lease, .. }] if lease.renewal == 1),
        "it renews as usual: {out:?}"
    );
    e.handle(In::LeaseWritten { write_id: 2 }, late + 5_000);
    let out = drain(&mut e);
    assert!(
        out.iter()
            .all(|o| matches!(o, Out::WriteLease { lease, .. } if lease.epoch == 1)),
        "the late renewal keeps epoch 1 and renewing goes on: {out:?}"
    );
    assert_eq!(e.leading(late + 5_000), Some(1));

    // The same starvation deposes a leader that shares its store with other nodes.
    let mut shared = elected("a");
    assert_eq!(shared.leading(late), None);
    shared.handle(In::Tick, late);
    assert!(
        drain(&mut shared).contains(&Out::SteppedDown { epoch: 1 }),
        "a shared-store leader must stop at its lease's end"
    );
}

#[test]
fn an_exclusive_node_takes_over_the_lease_of_its_crashed_predecessor_at_once() {
    let mut e = Election::new(ElectionConfig {
        exclusive: true,
        ..config("embedded")
    })
    .unwrap();
    e.handle(In::Tick, 0);
    assert_eq!(drain(&mut e), vec![Out::ReadLease]);
    let left = lease(7, "embedded", 41);
    e.handle(In::LeaseRead(Some(left.clone())), 0);
    assert_eq!(
        drain(&mut e),
        vec![Out::WriteLease {
            write_id: 1,
            expected: Some(left),
            lease: Lease {
                epoch: 8,
                ..lease(8, "embedded", 0)
            }
        }],
        "no wait of lease_ms + clock_bound_ms"
    );
    e.handle(In::LeaseWritten { write_id: 1 }, 3);
    assert_eq!(drain(&mut e), vec![Out::Elected { epoch: 8 }]);
}

#[test]
fn an_exclusive_leader_still_steps_down_when_the_store_refuses_its_lease() {
    let mut e = exclusive("embedded");
    e.handle(In::Tick, RENEW);
    drain(&mut e);
    e.handle(
        In::LeaseWriteFailed {
            write_id: 2,
            outcome: WriteOutcome::NotWritten,
        },
        RENEW + 1,
    );
    // It re-reads the record; the store shows another holder (someone broke the
    // deployment's promise of one node): it stops at once.
    assert_eq!(drain(&mut e), vec![Out::ReadLease]);
    e.handle(In::LeaseRead(Some(lease(2, "intruder", 0))), RENEW + 10);
    let out = drain(&mut e);
    assert!(out.contains(&Out::SteppedDown { epoch: 1 }), "{out:?}");
    assert_eq!(e.leading(RENEW + 10), None);
    assert!(
        !out.iter().any(|o| matches!(o, Out::WriteLease { .. })),
        "another holder's lease is waited out, not taken at once: {out:?}"
    );
}
