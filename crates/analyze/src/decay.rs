//! Popularity decay (libCacheSim's `PopularityDecay`): for each whole
//! window, how many of the objects requested in it were first requested
//! in each window up to it — how fast new objects stop being asked for.

/// Windows whose rows are kept: the rows grow by one each window, so the
/// matrix is bounded at `MAX_WINDOWS² / 2` counts (libCacheSim writes
/// every row, and #29's 91 GB were such files); later windows are counted
/// in `popularity_decay_windows_dropped`.
pub const MAX_WINDOWS: usize = 1024;

pub(crate) struct Decay {
    window: u64,
    /// Where the current window ends (since the first request).
    next: u64,
    current: Vec<u64>,
    pub(crate) rows: Vec<Vec<u64>>,
    pub(crate) dropped: u64,
}

impl Decay {
    pub(crate) fn new(window: u64) -> Decay {
        Decay {
            window,
            next: window,
            current: vec![0],
            rows: Vec::new(),
            dropped: 0,
        }
    }

    /// A request at `t` to an object first requested at `created`;
    /// `first_in_window` when it is the object's first in this window.
    /// Windows close before the request is counted (unlike the rates').
    #[inline]
    pub(crate) fn add(&mut self, t: u64, created: u64, first_in_window: bool) {
        if t >= self.next {
            let passed = (t - self.next) / self.window + 1;
            let kept = passed.min(MAX_WINDOWS.saturating_sub(self.rows.len()) as u64);
            for _ in 0..kept {
                let n = self.current.len() + 1;
                self.rows
                    .push(std::mem::replace(&mut self.current, vec![0; n]));
            }
            self.dropped += passed - kept;
            if self.rows.len() >= MAX_WINDOWS {
                // No row is kept again: nothing more to count.
                self.current = Vec::new();
            }
            self.next = self.next.saturating_add(passed.saturating_mul(self.window));
        }
        if first_in_window && let Some(c) = self.current.get_mut((created / self.window) as usize) {
            *c += 1;
        }
    }
}
