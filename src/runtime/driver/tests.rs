//! The driver's own tests: requests, pacing, loading and progress, frame by frame.

use super::*;
use crate::neighbours::AvoidForm;
use crate::runtime::action::{Action, Outcome};
use crate::runtime::pace::Pace;
use crate::runtime::progress::Work;
use crate::runtime::swarm::MAX_CHURN;

fn driver(kind: LayoutKind, seed: u64) -> Driver {
    Driver::new(kind, seed).expect("a CPU layout")
}

#[test]
fn growing_is_spread_over_frames_and_shrinking_is_immediate() {
    let mut d = driver(LayoutKind::Soa, 1).with_grow_pace(Pace::Entities(GROW_CHUNK));
    d.apply(&Action::Count(GROW_CHUNK * 2 + 10)).unwrap();
    d.frame_step();
    assert_eq!(d.swarm().len(), GROW_CHUNK);
    d.frame_step();
    d.frame_step();
    assert_eq!(d.swarm().len(), GROW_CHUNK * 2 + 10);
    d.apply(&Action::Count(5)).unwrap();
    assert_eq!(d.swarm().len(), 5);
}

#[test]
fn growing_by_time_reaches_the_count_a_batch_at_a_time() {
    let mut d = driver(LayoutKind::Flecs, 1);
    d.apply(&Action::Count(30_000)).unwrap();
    let first = d.frame_step().spawned;
    assert!(first > 0 && first <= 30_000, "{first}");
    let mut frames = 1;
    while d.swarm().len() < 30_000 {
        assert!(d.frame_step().spawned > 0, "every frame makes progress");
        frames += 1;
    }
    assert_eq!(d.swarm().len(), 30_000);
    assert!(frames < 10_000);
}

const CHUNK: usize = 250_000;

#[test]
fn a_switch_is_spread_over_frames_while_the_swarm_keeps_moving() {
    let n = CHUNK * 2 + 10;
    let mut switching = driver(LayoutKind::Soa, 3).with_chunks(usize::MAX, CHUNK);
    let mut staying = driver(LayoutKind::Soa, 3).with_chunks(usize::MAX, CHUNK);
    for d in [&mut switching, &mut staying] {
        d.apply(&Action::Count(n)).unwrap();
        d.apply(&Action::Churn(1000)).unwrap();
        while d.swarm().len() < n {
            d.frame_step();
        }
    }
    assert_eq!(
        switching.apply(&Action::Layout(LayoutKind::Aos)),
        Ok(Outcome::SwitchStarted {
            to: LayoutKind::Aos,
            entities: n
        })
    );
    assert_eq!(switching.requested_layout(), LayoutKind::Aos);
    let mut copied = Vec::new();
    for _ in 0..4 {
        copied.push(switching.frame_step().copied);
        staying.frame_step();
        assert_eq!(switching.swarm().checksum(), staying.swarm().checksum());
    }
    // Churn keeps the count (1000 spawned, 1000 removed, some of them already copied).
    assert_eq!(copied, [CHUNK, CHUNK, 10, 0]);
    assert_eq!(switching.swarm().kind(), LayoutKind::Aos);
    assert_eq!(switching.swarm().transition(), None);
    assert_eq!(switching.swarm().export(), staying.swarm().export());
}

/// Where a switch's chunks fall never changes the population: the same frames, with churn,
/// growth and a shrink in the middle of the switches, end in the same state whether each
/// frame copies 1, a few hundred, a random count or everything, and whether it is paced by
/// time (`replay` and the app may split a switch differently and still agree).
#[test]
fn the_state_does_not_depend_on_where_switch_chunks_fall() {
    use rand::{RngExt, SeedableRng};
    let run = |pick: &mut dyn FnMut(u64) -> Pace| {
        let mut d = driver(LayoutKind::Soa, 11).with_grow_pace(Pace::Entities(3_000));
        d.apply(&Action::Count(12_000)).unwrap();
        d.apply(&Action::Churn(300)).unwrap();
        let plan = [
            (2, Action::Layout(LayoutKind::EcsTable)),
            (9, Action::Count(15_000)),
            (12, Action::Layout(LayoutKind::Hecs)),
            (14, Action::Count(4_000)),
            (16, Action::Layout(LayoutKind::Boxed)),
            (30, Action::Layout(LayoutKind::Soa)),
        ];
        let mut checksums = Vec::new();
        for frame in 0..60u64 {
            for (at, action) in &plan {
                if *at == frame {
                    d.apply(action).unwrap();
                }
            }
            d.pacing.copy.pace = pick(frame);
            d.frame_step();
            checksums.push(d.swarm().checksum());
        }
        (checksums, d.swarm().len(), d.swarm().kind())
    };
    let all_at_once = run(&mut |_| Pace::Entities(usize::MAX));
    assert_eq!((all_at_once.1, all_at_once.2), (4_000, LayoutKind::Soa));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let chunkings: [&mut dyn FnMut(u64) -> Pace; 4] = [
        &mut |_| Pace::Entities(1),
        &mut |_| Pace::Entities(777),
        &mut |_| Pace::Entities(rng.random_range(1..5_000)),
        &mut |frame| {
            if frame % 2 == 0 {
                Pace::Budget(Duration::from_micros(50))
            } else {
                Pace::Entities(2_000)
            }
        },
    ];
    for pick in chunkings {
        assert_eq!(run(pick), all_at_once);
    }
}

#[test]
fn layout_requests_say_what_they_did() {
    let mut d = driver(LayoutKind::Soa, 1);
    assert_eq!(
        d.apply(&Action::Layout(LayoutKind::Aos)),
        Ok(Outcome::Switched {
            to: LayoutKind::Aos
        }),
        "an empty swarm switches on the spot"
    );
    d.apply(&Action::Count(100)).unwrap();
    d.frame_step();
    assert_eq!(
        d.apply(&Action::Layout(LayoutKind::Aos)),
        Ok(Outcome::Unchanged)
    );
    d.apply(&Action::Layout(LayoutKind::Boxed)).unwrap();
    assert_eq!(
        d.apply(&Action::Layout(LayoutKind::Aos)),
        Ok(Outcome::SwitchCancelled {
            staying: LayoutKind::Aos,
            cancelled: Some((LayoutKind::Boxed, 0))
        })
    );
    assert_eq!(d.apply(&Action::Exit), Ok(Outcome::NotForDriver));
    assert_eq!(d.apply(&Action::Pause(false)), Ok(Outcome::Unchanged));
    assert_eq!(d.apply(&Action::Pause(true)), Ok(Outcome::Changed));
    assert!(d.paused());
}

/// A request during a switch: the layout already being filled keeps the copy going, the
/// current one cancels it, a third replaces it and says what it replaced.
#[test]
fn requests_during_a_switch_keep_cancel_or_replace_it() {
    let n = 50_000;
    let mut d = driver(LayoutKind::Soa, 2).with_chunks(usize::MAX, 10_000);
    d.apply(&Action::Count(n)).unwrap();
    d.frame_step();
    d.apply(&Action::Layout(LayoutKind::Aos)).unwrap();
    d.frame_step();
    assert_eq!(d.swarm().transition().map(|p| p.copied), Some(10_000));
    // The same layout again: nothing restarts.
    assert_eq!(
        d.apply(&Action::Layout(LayoutKind::Aos)),
        Ok(Outcome::Unchanged)
    );
    d.frame_step();
    assert_eq!(d.swarm().transition().map(|p| p.copied), Some(20_000));
    // A third: the copy into aos gives way, and the outcome says how far it had come.
    assert_eq!(
        d.apply(&Action::Layout(LayoutKind::Boxed)),
        Ok(Outcome::SwitchReplaced {
            replaced: LayoutKind::Aos,
            copied: 20_000,
            to: LayoutKind::Boxed,
            entities: n,
        })
    );
    let p = d.swarm().transition().unwrap();
    assert_eq!((p.to, p.copied), (LayoutKind::Boxed, 0));
    assert_eq!(d.requested_layout(), LayoutKind::Boxed);
    d.frame_step();
    // Back to the current layout: cancelled, with what was cancelled.
    assert_eq!(
        d.apply(&Action::Layout(LayoutKind::Soa)),
        Ok(Outcome::SwitchCancelled {
            staying: LayoutKind::Soa,
            cancelled: Some((LayoutKind::Boxed, 10_000)),
        })
    );
    assert_eq!(
        (d.swarm().kind(), d.swarm().transition()),
        (LayoutKind::Soa, None)
    );
    // And a switch asked for after all that lands with every entity's state.
    let mut reference = driver(LayoutKind::Soa, 2).with_chunks(usize::MAX, 10_000);
    reference.apply(&Action::Count(n)).unwrap();
    for _ in 0..4 {
        reference.frame_step();
    }
    d.apply(&Action::Layout(LayoutKind::Hecs)).unwrap();
    for _ in 0..6 {
        d.frame_step();
        reference.frame_step();
    }
    assert_eq!(d.swarm().kind(), LayoutKind::Hecs);
    assert_eq!(d.swarm().checksum(), reference.swarm().checksum());
}

/// The start-up fill: the population asked for is there before the first frame, whatever
/// the slices, and equals one loaded at once; no frame is counted while loading.
#[test]
fn loading_fills_the_count_before_the_first_frame() {
    let n = 120_000;
    let mut sliced = driver(LayoutKind::EcsTable, 9);
    sliced.apply(&Action::Count(n)).unwrap();
    sliced.begin_loading();
    assert!(sliced.loading());
    let mut slices = 0;
    while sliced.loading() {
        let progress = sliced.progress();
        assert_eq!(progress.len(), 1);
        assert_eq!(progress[0].work, Work::Loading);
        assert!(
            progress[0].line().starts_with("loading: "),
            "{:?}",
            progress[0]
        );
        sliced.load_step(Duration::from_micros(300)).unwrap();
        slices += 1;
    }
    assert!(slices > 1, "a short slice splits the fill");
    assert_eq!((sliced.swarm().len(), sliced.frame()), (n, 0));
    assert!(sliced.progress().is_empty());
    let mut at_once = driver(LayoutKind::EcsTable, 9);
    at_once.apply(&Action::Count(n)).unwrap();
    at_once.load_all().unwrap();
    assert_eq!(at_once.swarm().checksum(), sliced.swarm().checksum());
    // Loading is over: growing again is paced by frames, as before.
    sliced.apply(&Action::Count(n + 10)).unwrap();
    sliced.begin_loading();
    assert!(
        sliced.loading(),
        "a driver may load again before its first frame"
    );
    sliced.load_all().unwrap();
    sliced.frame_step();
    assert_eq!(sliced.frame(), 1);
}

/// A big growth of a Bevy world, by time as the app grows, first moves into a world whose
/// entity index is prepared for the count: its first frame spawns nothing and the progress
/// says why, and the growth then reaches the count in the layout asked for.
#[test]
fn a_big_growth_in_bevy_waits_for_a_prepared_world() {
    let mut d = driver(LayoutKind::EcsTable, 4);
    d.apply(&Action::Count(1_000)).unwrap();
    d.load_all().unwrap();
    d.apply(&Action::Count(300_000)).unwrap();
    assert_eq!(d.frame_step().spawned, 0);
    let work: Vec<Work> = d.progress().iter().map(|p| p.work).collect();
    assert_eq!(
        work,
        [
            Work::Preparing(LayoutKind::EcsTable, 300_000),
            Work::Growing
        ]
    );
    assert!(d.final_line().contains("prepared for 300000 pending"));
    let mut frames = 0;
    while d.working() {
        d.frame_step();
        frames += 1;
        assert!(frames < 1_000_000);
    }
    assert_eq!(d.swarm().len(), 300_000);
    assert_eq!(d.swarm().kind(), LayoutKind::EcsTable);
    assert_eq!(d.swarm().check_targets(), Ok(()));
    // By entities a frame (`replay`), growth stays where it is, frame for frame.
    let mut replayed = driver(LayoutKind::EcsTable, 4).with_grow_pace(Pace::Entities(50_000));
    replayed.apply(&Action::Count(1_000)).unwrap();
    replayed.load_all().unwrap();
    replayed.apply(&Action::Count(300_000)).unwrap();
    assert_eq!(replayed.frame_step().spawned, 50_000);
}

#[test]
fn progress_says_how_far_a_switch_has_come() {
    let mut d = driver(LayoutKind::Soa, 2).with_chunks(usize::MAX, 25_000);
    d.apply(&Action::Count(100_000)).unwrap();
    d.frame_step();
    assert!(d.progress().is_empty());
    d.apply(&Action::Layout(LayoutKind::Aos)).unwrap();
    d.frame_step();
    let progress = d.progress();
    assert_eq!(progress.len(), 1);
    assert_eq!(
        (progress[0].work, progress[0].done, progress[0].total),
        (Work::Switching(LayoutKind::Aos), 25_000, 100_000)
    );
    assert!(
        progress[0]
            .line()
            .starts_with("switching to aos: 25,000 of 100,000 (25%)"),
        "{}",
        progress[0].line()
    );
}

/// The share follows the frames the driver runs: with slow frames that do not copy, a switch
/// may copy for half of each, not for the floor of 60 Hz (`pace::MIN_SHARE`).
#[test]
fn the_share_of_a_frame_follows_the_frames_run() {
    let mut d = driver(LayoutKind::Soa, 2);
    assert_eq!(d.frame_share(), crate::runtime::pace::MIN_SHARE);
    for _ in 0..6 {
        d.frame_step();
        std::thread::sleep(Duration::from_millis(40));
    }
    let share = d.frame_share();
    assert!(
        share >= Duration::from_millis(10) && share <= Duration::from_millis(40),
        "{share:?}"
    );
}

#[test]
fn seek_is_a_setting_kept_across_a_switch() {
    let mut d = driver(LayoutKind::Soa, 4);
    d.apply(&Action::Count(3_000)).unwrap();
    d.frame_step();
    assert_eq!(d.apply(&Action::Seek(true)), Ok(Outcome::Changed));
    assert_eq!(d.systems(), Systems::WITH_SEEK);
    let report = d.frame_step();
    assert!(report.seek > Duration::ZERO && report.moving > Duration::ZERO);
    // Every layout seeks: a switch with seek on goes through, and seek stays on.
    d.apply(&Action::Layout(LayoutKind::Hecs)).unwrap();
    while d.swarm().transition().is_some() {
        d.frame_step();
    }
    assert_eq!(
        (d.swarm().kind(), d.systems()),
        (LayoutKind::Hecs, Systems::WITH_SEEK)
    );
    assert!(d.frame_step().seek > Duration::ZERO);
    assert_eq!(d.apply(&Action::Seek(false)), Ok(Outcome::Changed));
    assert_eq!(d.apply(&Action::Seek(false)), Ok(Outcome::Unchanged));
    let report = d.frame_step();
    assert_eq!(report.seek, Duration::ZERO);
}

#[test]
fn neighbours_are_a_setting_kept_across_a_switch_and_a_sort_by_cell() {
    let mut d = driver(LayoutKind::Soa, 4);
    d.apply(&Action::Count(3_000)).unwrap();
    d.frame_step();
    assert_eq!(d.apply(&Action::Avoid(true)), Ok(Outcome::Changed));
    assert_eq!(d.systems(), Systems::WITH_AVOID);
    assert!(d.frame_step().avoid > Duration::ZERO);
    assert!(d.swarm().neighbour_counts().neighbours > 0);
    d.apply(&Action::Layout(LayoutKind::Boxed)).unwrap();
    d.apply(&Action::AvoidForm(AvoidForm::Tuned)).unwrap();
    d.apply(&Action::Order(Order::Cell)).unwrap();
    for _ in 0..100 {
        if d.swarm().transition().is_none() && d.swarm().order() == Order::Cell {
            break;
        }
        d.frame_step();
    }
    assert_eq!(
        (d.swarm().kind(), d.swarm().order(), d.systems()),
        (LayoutKind::Boxed, Order::Cell, Systems::WITH_AVOID)
    );
    assert_eq!(d.swarm().avoid_form(), AvoidForm::Tuned);
    assert!(d.frame_step().avoid > Duration::ZERO);
    assert_eq!(d.apply(&Action::Avoid(false)), Ok(Outcome::Changed));
    assert_eq!(d.frame_step().avoid, Duration::ZERO);
}

/// The freeze guard: with the neighbours on, a count whose pass would take seconds a frame is
/// refused before anything grows, naming what helps; turning them on at such a count too; the
/// tuned pass, or the neighbours off, let the count through.
#[test]
fn a_neighbour_pass_that_would_freeze_the_window_is_refused() {
    let mut d = driver(LayoutKind::Soa, 4);
    d.apply(&Action::Count(1_000)).unwrap();
    d.apply(&Action::Avoid(true)).unwrap();
    let e = d.apply(&Action::Count(5_000_000)).unwrap_err().to_string();
    assert!(e.contains("s a frame at 5000000 entities"), "{e}");
    assert!(e.contains("sort by cell (C), the tuned pass (J)"), "{e}");
    assert_eq!(d.target(), 1_000);
    d.apply(&Action::Avoid(false)).unwrap();
    d.apply(&Action::Count(5_000_000)).unwrap();
    let e = d.apply(&Action::Avoid(true)).unwrap_err().to_string();
    assert!(e.contains("nothing was changed"), "{e}");
    assert!(!d.systems().avoids());
    d.apply(&Action::AvoidForm(AvoidForm::Tuned)).unwrap();
    d.apply(&Action::Avoid(true)).unwrap();
    // Back to idiomatic at that count: refused, the tuned pass kept.
    assert!(d.apply(&Action::AvoidForm(AvoidForm::Idiomatic)).is_err());
    assert_eq!(d.swarm().avoid_form(), AvoidForm::Tuned);
    // A reach too wide for the count is refused too, with the largest accepted.
    let wide = crate::neighbours::Reach::radius(200.0).unwrap();
    let e = d.apply(&Action::Reach(wide)).unwrap_err().to_string();
    assert!(e.contains("accepted at this count: a radius up to"), "{e}");
}

/// Without the guard (`verify`), the same requests are carried out: a check asked for at a
/// count is run at that count, however long its frames.
#[test]
fn without_the_freeze_guard_a_slow_neighbour_pass_is_run() {
    let mut d = driver(LayoutKind::Soa, 4).without_freeze_guard();
    d.apply(&Action::Count(1_000)).unwrap();
    d.apply(&Action::Avoid(true)).unwrap();
    d.apply(&Action::Count(5_000_000)).unwrap();
    assert_eq!(d.target(), 5_000_000);
    d.apply(&Action::Avoid(false)).unwrap();
    d.apply(&Action::Avoid(true)).unwrap();
    assert!(d.systems().avoids());
    assert_eq!(d.swarm().avoid_form(), AvoidForm::Idiomatic);
}

#[test]
fn bad_settings_are_refused_and_nothing_changes() {
    let mut d = driver(LayoutKind::Aos, 1);
    d.apply(&Action::Count(1000)).unwrap();
    d.frame_step();
    let before = d.swarm().checksum();
    let err = d
        .apply(&Action::Count(APP_MAX_ENTITIES + 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("10000000"), "{err}");
    let err = d
        .apply(&Action::Churn(MAX_CHURN + 1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("0 to 100000"), "{err}");
    assert_eq!(
        (d.target(), d.churn(), d.swarm().checksum()),
        (1000, 0, before)
    );
}

#[test]
fn paused_frames_change_nothing() {
    let mut d = driver(LayoutKind::EcsTable, 1);
    d.apply(&Action::Count(500)).unwrap();
    d.apply(&Action::Churn(10)).unwrap();
    d.frame_step();
    d.apply(&Action::Pause(true)).unwrap();
    let before = d.swarm().checksum();
    d.frame_step();
    assert_eq!(d.swarm().checksum(), before);
}

/// A sort asked for while other work is under way waits for it: `--order group` sorts as part
/// of the start-up fill (no frame), and a sort asked for during a switch starts when it lands;
/// a switch asked for during a sort takes over, and the sort starts again in the new layout.
#[test]
fn a_sort_waits_for_the_fill_and_for_a_switch_and_gives_way_to_one() {
    let n = 30_000;
    let mut d = driver(LayoutKind::Soa, 5).with_chunks(usize::MAX, 10_000);
    d.apply(&Action::Count(n)).unwrap();
    d.begin_loading();
    assert_eq!(
        d.apply(&Action::Order(Order::Group)),
        Ok(Outcome::ReorderQueued {
            order: Order::Group
        })
    );
    assert_eq!(d.requested_order(), Order::Group);
    d.load_all().unwrap();
    assert_eq!(d.frame(), 0, "sorted before the first frame");
    assert_eq!(
        (d.swarm().order(), d.swarm().transition()),
        (Order::Group, None)
    );
    assert!(d.swarm().target_spread(1_000).far < 0.01);

    // Back by id, over frames, with the progress of a sort.
    assert_eq!(
        d.apply(&Action::Order(Order::Id)),
        Ok(Outcome::ReorderStarted {
            order: Order::Id,
            entities: n,
            replaced: None
        })
    );
    d.frame_step();
    assert_eq!(d.progress()[0].work, Work::Sorting(Order::Id));
    assert_eq!(d.progress()[0].done, 10_000);
    // A switch takes over; the sort waits for it, then runs in the new layout.
    let started = d.apply(&Action::Layout(LayoutKind::Aos)).unwrap();
    assert_eq!(
        started,
        Outcome::SwitchStarted {
            to: LayoutKind::Aos,
            entities: n
        }
    );
    assert_eq!(d.requested_order(), Order::Id);
    while d.swarm().kind() != LayoutKind::Aos {
        d.frame_step();
    }
    d.frame_step();
    assert_eq!(
        d.swarm().transition().map(|p| p.order()),
        Some(Some(Order::Id))
    );
    while d.swarm().transition().is_some() {
        d.frame_step();
    }
    assert_eq!(d.swarm().order(), Order::Id);
    assert!(d.swarm().target_spread(100).far > 0.9);
    // Asked again: already so, said.
    assert_eq!(
        d.apply(&Action::Order(Order::Id)),
        Ok(Outcome::InOrder {
            order: Order::Id,
            cancelled: None
        })
    );
    // And a sort asked for during a switch is queued, not started.
    d.apply(&Action::Layout(LayoutKind::Soa)).unwrap();
    assert_eq!(
        d.apply(&Action::Order(Order::Group)),
        Ok(Outcome::ReorderQueued {
            order: Order::Group
        })
    );
    assert_eq!(d.swarm().transition().map(|p| p.order()), Some(None));
    while d.swarm().transition().is_some() || d.requested_order() != d.swarm().order() {
        d.frame_step();
    }
    assert_eq!(
        (d.swarm().kind(), d.swarm().order()),
        (LayoutKind::Soa, Order::Group)
    );
    assert_eq!(d.swarm().check_targets(), Ok(()));
}

/// The re-sort threshold: off, churn spreads a sorted population out and nothing happens; on,
/// the driver sorts by group again within a check's interval of the spread passing it, and the
/// sort brings the spread back down. Every entity and target is kept.
#[test]
fn a_resort_threshold_sorts_again_once_churn_has_spread_the_targets() {
    use crate::runtime::swarm::group_stretch;
    use crate::runtime::values::ResortAbove;
    let n = 20_000;
    let mut d = driver(LayoutKind::Soa, 6).with_chunks(usize::MAX, 5_000);
    d.apply(&Action::Count(n)).unwrap();
    d.apply(&Action::Order(Order::Group)).unwrap();
    d.begin_loading();
    d.load_all().unwrap();
    assert_eq!(d.swarm().order(), Order::Group);
    let spread = |d: &Driver| d.swarm().target_spread(group_stretch(d.swarm().len())).far;
    d.apply(&Action::Churn(1_000)).unwrap();
    for _ in 0..80 {
        assert_eq!(d.frame_step().resorted, None, "off by default");
    }
    let strayed = spread(&d);
    assert!(strayed > 0.3, "churn spread the targets: {strayed}");
    let threshold = ResortAbove::new(25).unwrap();
    assert_eq!(
        d.apply(&Action::Resort(Some(threshold))),
        Ok(Outcome::Changed)
    );
    let far = (0..40)
        .find_map(|_| d.frame_step().resorted)
        .expect("a re-sort within 40 frames");
    assert!(far > threshold.share(), "{far}");
    d.apply(&Action::Churn(0)).unwrap();
    while d.swarm().transition().is_some() {
        d.frame_step();
    }
    assert_eq!(d.swarm().order(), Order::Group);
    assert!(spread(&d) < 0.01, "sorted again: {}", spread(&d));
    d.swarm().check_targets().unwrap();
    assert_eq!(d.swarm().len(), n);
    assert_eq!(d.apply(&Action::Resort(None)), Ok(Outcome::Changed));
    assert_eq!(d.resort(), None);
}
