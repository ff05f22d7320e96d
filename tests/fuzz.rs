//! Property tests over everything a person types: the script parser, every value parser, and the
//! binary's command line. Any input gives a result or an error that names the problem; nothing
//! panics, nothing hangs, and what the parsers accept reads back as written.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use entity_layouts::layout::LayoutKind;
use entity_layouts::runtime::action::Action;
use entity_layouts::runtime::action::{ClipRequest, ClipSettings};
use entity_layouts::runtime::values::{
    BenchCount, Churn, EntityCount, Frames, UiScale, WindowSize,
};
use entity_layouts::threads::Threads;
use entity_layouts::tools::script::{parse, to_text};

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        (0..LayoutKind::ALL.len()).prop_map(|i| Action::Layout(LayoutKind::ALL[i])),
        (0usize..=10_000_000).prop_map(Action::Count),
        any::<bool>().prop_map(|all| Action::Threads(if all {
            Threads::All
        } else {
            Threads::One
        })),
        (0usize..=100_000).prop_map(Action::Churn),
        any::<bool>().prop_map(Action::Pause),
        (1u64..=1_000_000).prop_map(Action::Wait),
        Just(Action::WaitDone),
        "[a-z0-9_/.-]{0,19}[a-z0-9]".prop_map(|p| Action::Screenshot(format!("{p}.png").into())),
        // Captions: anything printable but a comment sign, without surrounding spaces; a `{` only
        // in a placeholder the parser knows (an unknown one is refused by name).
        "[^#{\\n\\r]{0,40}".prop_map(|t| Action::Say(t.trim().to_string())),
        ("[^#{\\n\\r]{0,20}", 0..4usize).prop_map(|(t, k)| {
            let placeholder = entity_layouts::tools::script::SAY_PLACEHOLDERS[k];
            Action::Say(format!("{}{{{placeholder}}}", t.trim_start()))
        }),
        (0.01f64..=1000.0).prop_map(Action::CountUntilOver),
        any::<bool>().prop_map(|best| Action::Simd(if best {
            entity_layouts::simd::SimdChoice::Best
        } else {
            entity_layouts::simd::SimdChoice::Baseline
        })),
        any::<bool>().prop_map(Action::ShowPanel),
        any::<bool>().prop_map(Action::ShowMemory),
        any::<bool>().prop_map(|quads| Action::Renderer(if quads {
            entity_layouts::runtime::renderer::Renderer::Quads
        } else {
            entity_layouts::runtime::renderer::Renderer::Compute
        })),
        Just(Action::Export),
        Just(Action::Record(ClipRequest::Stop)),
        (proptest::option::of(1u32..=6000), 1u8..=8, any::<bool>()).prop_map(
            |(tenths, scale, palette)| {
                Action::Record(ClipRequest::Start(ClipSettings {
                    seconds: tenths.map(|t| f64::from(t) / 10.0),
                    scale,
                    palette,
                }))
            }
        ),
        Just(Action::Exit),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_parses_or_names_its_line(text in "\\PC{0,200}(\\n\\PC{0,60}){0,6}") {
        match parse(&text) {
            Ok(actions) => prop_assert!(actions.len() <= text.lines().count()),
            Err(e) => {
                prop_assert!(e.line >= 1 && e.line <= text.lines().count().max(1), "{e}");
                let prefix = format!("script line {}:", e.line);
                prop_assert!(e.to_string().starts_with(&prefix), "{}", e);
            }
        }
    }

    #[test]
    fn any_bytes_parse_or_name_their_line(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = parse(&text) {
            prop_assert!(e.line >= 1);
        }
    }

    #[test]
    fn scripts_read_back_as_written(actions in proptest::collection::vec(action(), 0..30)) {
        let text = to_text(&actions);
        prop_assert_eq!(parse(&text).map_err(|e| e.to_string()), Ok(actions), "{}", text);
    }

    #[test]
    fn value_parsers_never_panic_and_name_the_range(text in "\\PC{0,24}") {
        for result in [
            text.parse::<EntityCount>().map(drop),
            text.parse::<BenchCount>().map(drop),
            text.parse::<Churn>().map(drop),
            text.parse::<Frames>().map(drop),
            text.parse::<Threads>().map(drop),
            text.parse::<LayoutKind>().map(drop),
            text.parse::<WindowSize>().map(drop),
            text.parse::<UiScale>().map(drop),
        ] {
            if let Err(e) = result {
                let message = e.to_string();
                prop_assert!(message.contains("is not accepted; accepted: "), "{}", message);
            }
        }
    }

    #[test]
    fn counts_in_range_read_back_and_the_rest_are_refused(n in 0u64..300_000_000) {
        let parsed = n.to_string().parse::<EntityCount>();
        if n <= 100_000_000 {
            prop_assert_eq!(parsed, Ok(EntityCount(n as usize)));
        } else {
            prop_assert!(parsed.unwrap_err().to_string().contains("0 to 100000000"));
        }
        let churn = format!("{}", n / 100).parse::<Churn>();
        prop_assert_eq!(churn.is_ok(), n / 100 <= 100_000);
    }
}

/// Flags and values, valid and not, that random command lines are drawn from.
const ARGS: [(&str, &[&str]); 11] = [
    ("--count", &["1000", "5_000", "2e4", "-5", "1e9", "abc", ""]),
    (
        "--layout",
        &["soa", "dyn-12", "ECS-TABLE", "octree", "dyn-3"],
    ),
    ("--threads", &["1", "all", "3"]),
    ("--churn", &["0", "10", "100001", "-1"]),
    ("--size", &["320x240", "1x1", "0x0", "8000x10", "wide"]),
    ("--ui-scale", &["1", "2.5", "0", "NaN"]),
    ("--dot-size", &["2", "9", "x"]),
    ("--seed", &["1", "18446744073709551615", "-1"]),
    ("--screenshot", &["shot.jpg"]),
    ("--script", &["/nonexistent/talk.txt"]),
    ("--bogus", &["1"]),
];

/// The binary with `args`, killed if it runs past `limit`: its exit code and stderr.
fn run_with_limit(args: &[String], limit: Duration) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_entity-layouts"))
        .args(args)
        .env("WGPU_BACKEND", "vulkan")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            return (status.code(), stderr);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Random command lines for the window, run headless for one frame where they are accepted:
    /// exit 0, or 2 with a message; never a panic (101), never a hang.
    #[test]
    fn random_command_lines_exit_0_or_2(picks in proptest::collection::vec((0..ARGS.len(), 0..8usize), 0..4)) {
        let mut args: Vec<String> = ["--headless", "--frames", "1"].map(String::from).to_vec();
        for (flag, value) in picks {
            let (name, values) = ARGS[flag];
            args.push(name.to_string());
            args.push(values[value % values.len()].to_string());
        }
        let (code, stderr) = run_with_limit(&args, Duration::from_secs(120));
        prop_assert!(
            matches!(code, Some(0) | Some(2)),
            "{:?} exited with {:?}:\n{}", args, code, stderr
        );
        prop_assert!(!stderr.contains("panicked"), "{:?}:\n{}", args, stderr);
        if code == Some(2) {
            prop_assert!(stderr.contains("error"), "{:?}: exit 2 without a message", args);
        }
    }
}
