//! Printing to stdout for the CLI (`out!`, `outln!`): as `print!`, except that a closed pipe (`convoy
//! deploy list -w | head`) ends the command quietly with status 0 instead of a panic, and any other
//! failure to write is an `error:` line and status 1.

use std::io::{ErrorKind, Write};

/// Writes `args` to stdout; see the module doc for what a failed write does.
pub fn write(args: std::fmt::Arguments<'_>) {
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        exit_on(&e);
    }
}

/// Flushes stdout (for frames that end without a newline); a failed flush as a failed [`write`].
pub fn flush() {
    if let Err(e) = std::io::stdout().lock().flush() {
        exit_on(&e);
    }
}

fn exit_on(e: &std::io::Error) -> ! {
    if e.kind() == ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: cannot write to stdout: {e}");
    std::process::exit(1);
}

/// `print!` through [`write`] (in scope in every module of `cli`: `#[macro_use]` in mod.rs).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!($($arg)*))
    };
}

/// `println!` through [`write`].
macro_rules! outln {
    () => {
        $crate::cli::stdout::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::stdout::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
