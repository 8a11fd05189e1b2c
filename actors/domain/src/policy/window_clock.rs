//! The windows' clock (issue 37): each window's schedule parsed once, and the span of time over which its
//! state (in force or not, and its next change) stays what it was last computed to be. Derived from the
//! replicated windows and kept beside them, never serialized: every answer equals what a fresh computation
//! from the window gives at that time, so a server with a cold clock (restarted, restored) decides alike.
//! The policies' pass thus reads each window in O(1) per write until its span ends.

use crate::policy::windows::{Schedule, Window};
use crate::values::ids::Timestamp;
use convoy_collections::CowMap;
use std::sync::Arc;

/// A window at one time: whether it is in force and when that next changes.
pub struct WindowNow<'a> {
    /// The window.
    pub window: &'a Window,
    /// In force now.
    pub open: bool,
    /// When it next opens or closes.
    pub next: Option<Timestamp>,
}

/// A window's state over a span of time `[from, until)` (`until: None`: for good).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// The time it was computed at: the first it holds for.
    pub from: Timestamp,
    /// The first time it may no longer hold: the next opening, or the current occurrence's end.
    pub until: Option<Timestamp>,
    /// In force over the span.
    pub open: bool,
    /// When it next opens or closes (the same for every time in the span).
    pub next: Option<Timestamp>,
}

impl Span {
    /// The state of `s` at `t`. Over `[t, until)` no opening happens, so the latest opening, the next one,
    /// and whether the latest still lasts are all what they are at `t` (hence so is the next change).
    pub fn at(s: &Schedule, t: Timestamp) -> Span {
        let last = s.last_opening(t);
        let next_opening = s.next_opening(t);
        let ends = last
            .map(|l| l.saturating_add(s.duration_ms()))
            .filter(|e| *e > t);
        let open = ends.is_some();
        let until = match (next_opening, ends) {
            (Some(n), Some(e)) => Some(n.min(e)),
            (n, e) => n.or(e),
        };
        Span {
            from: t,
            until,
            open,
            next: if open { s.closes(t) } else { next_opening },
        }
    }

    /// Whether the span holds at `t`.
    pub fn covers(&self, t: Timestamp) -> bool {
        self.from <= t && self.until.is_none_or(|u| t < u)
    }
}

/// One window's parsed schedule (`None`: it does not parse, and so never holds) and its latest span.
#[derive(Clone, Debug)]
pub struct Clocked {
    schedule: Option<Arc<Schedule>>,
    span: Option<Span>,
}

impl Clocked {
    /// Parses `w`'s schedule, with no span yet.
    pub fn new(w: &Window) -> Clocked {
        Clocked {
            schedule: w.schedule().ok().map(Arc::new),
            span: None,
        }
    }

    /// The parsed schedule.
    pub fn schedule(&self) -> Option<&Schedule> {
        self.schedule.as_deref()
    }

    /// The state at `t`, from the span when it holds (computed, not kept, when it does not).
    pub fn peek(&self, t: Timestamp) -> Option<Span> {
        match self.span {
            Some(span) if span.covers(t) => Some(span),
            _ => self.schedule().map(|s| Span::at(s, t)),
        }
    }

    /// The state at `t`, keeping a newly computed span.
    pub fn at(&mut self, t: Timestamp) -> Option<Span> {
        let span = self.peek(t);
        if span.is_some() {
            self.span = span;
        }
        span
    }
}

/// Every window's [`Clocked`], by name: the same names as the windows once [`WindowClock::refresh`] ran.
#[derive(Clone, Debug, Default)]
pub struct WindowClock {
    entries: CowMap<String, Clocked>,
}

/// Derived data: two clocks of equal windows answer alike, so a state's equality ignores them.
impl PartialEq for WindowClock {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl WindowClock {
    /// Brings the clock to `windows` at `at`: a new window is parsed, one gone is forgotten, and a span that
    /// ended is computed again. O(1) per window while no span ends.
    pub fn refresh(&mut self, windows: &CowMap<String, Window>, at: Timestamp) {
        if self.entries.len() != windows.len()
            || self.entries.keys().any(|k| !windows.contains_key(k))
        {
            self.entries.retain(|k, _| windows.contains_key(k));
        }
        for (name, w) in windows.iter() {
            let stale = self
                .entries
                .get(name)
                .is_none_or(|c| c.span.is_none_or(|s| !s.covers(at)));
            if stale {
                let c = self
                    .entries
                    .get_or_insert_with(name.clone(), || Clocked::new(w));
                c.at(at);
            }
        }
    }

    /// Forgets window `name` (deleted, or replaced).
    pub fn forget(&mut self, name: &str) {
        self.entries.remove(name);
    }

    /// Window `w`'s clock entry: the kept one, or one parsed now when the clock has not seen it yet.
    pub fn clocked(&self, w: &Window) -> Clocked {
        self.entries
            .get(&w.name)
            .cloned()
            .unwrap_or_else(|| Clocked::new(w))
    }

    /// Every window at `at` (one that does not parse never holds), without changing the clock.
    pub fn now<'a>(
        &self,
        windows: &'a CowMap<String, Window>,
        at: Timestamp,
    ) -> Vec<WindowNow<'a>> {
        windows
            .iter()
            .filter_map(|(name, w)| {
                let span = match self.entries.get(name) {
                    Some(c) => c.peek(at),
                    None => Clocked::new(w).peek(at),
                }?;
                Some(WindowNow {
                    window: w,
                    open: span.open,
                    next: span.next,
                })
            })
            .collect()
    }
}

/// The windows that apply to one deployment, walked forward in time (a dry-run's estimates): each is
/// computed again only when its span ends, so a walk costs one cron search per change, not per window per
/// step.
pub struct Walk<'a> {
    items: Vec<(&'a Window, Clocked)>,
}

impl<'a> Walk<'a> {
    /// The windows that apply to a deployment of `resource` on `consumer`, with their kept clocks.
    pub fn new(
        clock: &WindowClock,
        windows: &'a CowMap<String, Window>,
        consumer: &str,
        resource: &str,
    ) -> Walk<'a> {
        let items = windows
            .values()
            .filter(|w| w.applies_to.covers(consumer, resource))
            .map(|w| (w, clock.clocked(w)))
            .collect();
        Walk { items }
    }

    /// Those windows at `t`.
    pub fn at(&mut self, t: Timestamp) -> Vec<WindowNow<'a>> {
        self.items
            .iter_mut()
            .filter_map(|(w, c)| {
                let span = c.at(t)?;
                Some(WindowNow {
                    window: w,
                    open: span.open,
                    next: span.next,
                })
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "window_clock_test.rs"]
mod tests;
