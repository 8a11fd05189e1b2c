//! The apps' own log files: each resource's run command writes its stdout to
//! `DIR/logs/<resource>.stdout.log` and its stderr to `DIR/logs/<resource>.stderr.log` (appended, so
//! an app the agent re-attached to after a restart keeps writing where it wrote). A file over its cap
//! is rotated by copy and truncate (`.1` the newest of the kept files): the app holds the file open,
//! and with `O_APPEND` its next write lands at the start of the emptied file.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The default cap of one log file, in bytes (`--app-log-max-bytes`).
pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// The default count of rotated files kept besides the live one (`--app-log-files`).
pub const DEFAULT_KEPT: u32 = 3;
/// The most of its stderr a failed start's error quotes, in bytes: with the words around it the error
/// stays under the 1,024 bytes the server keeps of one.
pub const QUOTE_BYTES: usize = 800;

/// Where the apps' logs go and how big they grow.
#[derive(Clone, Debug)]
pub struct AppLogs {
    /// `DIR/logs`.
    pub dir: PathBuf,
    /// A file past this many bytes is rotated.
    pub max_bytes: u64,
    /// Rotated files kept (`.1` .. `.N`); 0 keeps none (the file is emptied).
    pub kept: u32,
}

/// A resource's two log files.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LogPaths {
    /// Its stdout.
    pub stdout: PathBuf,
    /// Its stderr.
    pub stderr: PathBuf,
}

impl AppLogs {
    /// The logs under `state_dir/logs` with the default cap and count.
    pub fn new(state_dir: &Path) -> Self {
        Self {
            dir: state_dir.join("logs"),
            max_bytes: DEFAULT_MAX_BYTES,
            kept: DEFAULT_KEPT,
        }
    }

    /// The files of `resource`.
    pub fn paths(&self, resource: &str) -> LogPaths {
        LogPaths {
            stdout: self.dir.join(format!("{resource}.stdout.log")),
            stderr: self.dir.join(format!("{resource}.stderr.log")),
        }
    }

    /// Opens both files of `resource` for appending (creating them, and the directory).
    pub fn open(&self, resource: &str) -> std::io::Result<(File, File)> {
        std::fs::create_dir_all(&self.dir)?;
        let p = self.paths(resource);
        Ok((append(&p.stdout)?, append(&p.stderr)?))
    }

    /// Rotates each file of `resource` that grew past the cap.
    pub fn rotate(&self, resource: &str) {
        let p = self.paths(resource);
        for path in [p.stdout, p.stderr] {
            if let Err(e) = rotate(&path, self.max_bytes, self.kept) {
                tracing::warn!(path = %path.display(), error = %e, "cannot rotate an app's log");
            }
        }
    }

    /// The length of `resource`'s stderr file now (0 when there is none).
    pub fn stderr_len(&self, resource: &str) -> u64 {
        std::fs::metadata(self.paths(resource).stderr).map_or(0, |m| m.len())
    }

    /// The last lines `resource` wrote to stderr after byte `from`: at most [`QUOTE_BYTES`], whole
    /// lines when cut, trimmed; empty when it wrote nothing.
    pub fn stderr_tail(&self, resource: &str, from: u64) -> String {
        tail(&self.paths(resource).stderr, from, QUOTE_BYTES).unwrap_or_default()
    }
}

fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// Rotates `path` when longer than `max`: `.N-1` → `.N`, ..., the file copied to `.1`, then emptied.
/// Whether it did.
pub fn rotate(path: &Path, max: u64, kept: u32) -> std::io::Result<bool> {
    let len = match std::fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if len <= max {
        return Ok(false);
    }
    let numbered = |n: u32| {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{n}"));
        path.with_file_name(name)
    };
    if kept > 0 {
        for n in (1..kept).rev() {
            match std::fs::rename(numbered(n), numbered(n + 1)) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        std::fs::copy(path, numbered(1))?;
    }
    OpenOptions::new().write(true).open(path)?.set_len(0)?;
    Ok(true)
}

/// The text of `path` after byte `from` (from 0 when the file is shorter: it was rotated), at most
/// `max` bytes of its end; cut at a line start when cut.
pub fn tail(path: &Path, from: u64, max: usize) -> std::io::Result<String> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let from = if from > len { 0 } else { from };
    let start = from.max(len.saturating_sub(max as u64));
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::with_capacity((len - start) as usize);
    file.take(max as u64).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let text = if start > from {
        text.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        &text
    };
    let text = text.trim();
    // Lossy decoding may have grown the text: keep at most `max` bytes of its end.
    let mut cut = text.len().saturating_sub(max);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    Ok(text[cut..].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_past_its_cap_is_rotated_and_the_writer_goes_on_at_its_start() {
        let dir = tempfile::tempdir().unwrap();
        let logs = AppLogs {
            dir: dir.path().join("logs"),
            max_bytes: 100,
            kept: 2,
        };
        let (mut out, _) = logs.open("web").unwrap();
        let path = logs.paths("web").stdout;
        for round in 0..4 {
            out.write_all(format!("{round}").repeat(150).as_bytes())
                .unwrap();
            logs.rotate("web");
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        }
        // The app's handle still appends, now at the start of the emptied file.
        out.write_all(b"after").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "after");
        let read = |n: u32| std::fs::read_to_string(format!("{}.{n}", path.display())).unwrap();
        assert_eq!(read(1), "3".repeat(150));
        assert_eq!(read(2), "2".repeat(150));
        assert!(!Path::new(&format!("{}.3", path.display())).exists());
        // Under the cap: left alone.
        assert!(!rotate(&path, 100, 2).unwrap());
    }

    #[test]
    fn the_tail_is_what_came_after_the_start_in_whole_lines_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("err");
        std::fs::write(&path, "old run\n").unwrap();
        let from = 8;
        let mut f = append(&path).unwrap();
        f.write_all(b"loading\nfatal: no config\n").unwrap();
        assert_eq!(tail(&path, from, 100).unwrap(), "loading\nfatal: no config");
        // Cut: starts at a line, ends with the last one, within the bound.
        let long = format!("{}\nlast words\n", "x".repeat(500));
        f.write_all(long.as_bytes()).unwrap();
        assert_eq!(tail(&path, from, 100).unwrap(), "last words");
        // Rotated since (shorter than `from`): read from its start.
        std::fs::write(&path, "new\n").unwrap();
        assert_eq!(tail(&path, 1000, 100).unwrap(), "new");
    }
}
