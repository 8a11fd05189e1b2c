//! Client flags before the subcommand: `convoy -o json deploy list` means `convoy deploy -o json list`.
//! The client's flags live on each client command (the agent and the simulator have their own
//! `--server`), so the command line is rewritten before clap reads it: leading client flags move to
//! just after the client command's name, where they apply to every subcommand below it.

use std::ffi::OsString;

/// The client commands (whose flags may come first).
pub const CLIENT_COMMANDS: &[&str] = &[
    "resource", "consumer", "deploy", "group", "cluster", "token", "node", "window", "version",
];

/// Client flags that take a value.
const VALUE_FLAGS: &[&str] = &[
    "--server",
    "--context",
    "--output",
    "-o",
    "--token",
    "--token-file",
    "--ca-file",
];

/// Top-level flags that stay where they are (with their value).
const TOP_FLAGS: &[&str] = &["--log-format"];

/// Whether `arg` is `flag`, `flag=value`, or (for `-o`) `-ojson`; and whether it carries its value.
fn flag_of(arg: &str) -> Option<(&'static str, bool)> {
    VALUE_FLAGS.iter().chain(TOP_FLAGS).find_map(|f| {
        if arg == *f {
            Some((*f, false))
        } else if arg.starts_with(&format!("{f}="))
            || (*f == "-o" && arg.len() > 2 && arg.starts_with("-o"))
        {
            Some((*f, true))
        } else {
            None
        }
    })
}

/// `args` (program name first) with the client flags before a client command moved after it.
pub fn hoist_global_flags(args: Vec<OsString>) -> Vec<OsString> {
    let mut moved: Vec<OsString> = Vec::new();
    let mut kept: Vec<OsString> = Vec::new();
    let mut iter = args.into_iter();
    let Some(program) = iter.next() else {
        return Vec::new();
    };
    kept.push(program);
    let mut rest: Vec<OsString> = iter.collect();
    let mut i = 0;
    while i < rest.len() {
        let Some(arg) = rest[i].to_str().map(str::to_string) else {
            break;
        };
        let Some((flag, inline)) = flag_of(&arg) else {
            break;
        };
        let take = if inline { 1 } else { 2 }.min(rest.len() - i);
        let target = if TOP_FLAGS.contains(&flag) {
            &mut kept
        } else {
            &mut moved
        };
        target.extend(rest[i..i + take].iter().cloned());
        i += take;
    }
    let tail = rest.split_off(i);
    let is_client = tail
        .first()
        .and_then(|a| a.to_str())
        .is_some_and(|c| CLIENT_COMMANDS.contains(&c));
    if moved.is_empty() || !is_client {
        // Nothing to move, or not a client command: leave the line as it was (clap says what is wrong).
        kept.extend(moved);
        kept.extend(tail);
        return kept;
    }
    let mut tail = tail.into_iter();
    kept.extend(tail.next());
    kept.extend(moved);
    kept.extend(tail);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str) -> String {
        let args = line.split(' ').map(OsString::from).collect();
        hoist_global_flags(args)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn client_flags_before_the_command_move_after_it() {
        assert_eq!(
            run("convoy -o json deploy list"),
            "convoy deploy -o json list"
        );
        assert_eq!(
            run("convoy --server a:1 --output=json -ojson cluster status"),
            "convoy cluster --server a:1 --output=json -ojson status"
        );
        assert_eq!(
            run("convoy --log-format json -o json node list"),
            "convoy --log-format json node -o json list"
        );
    }

    #[test]
    fn other_lines_are_left_alone() {
        assert_eq!(
            run("convoy deploy list -o json"),
            "convoy deploy list -o json"
        );
        assert_eq!(
            run("convoy --server a:1 agent"),
            "convoy --server a:1 agent"
        );
        assert_eq!(
            run("convoy --log-format text server"),
            "convoy --log-format text server"
        );
        assert_eq!(run("convoy -o"), "convoy -o");
    }
}
