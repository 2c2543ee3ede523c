//! IOS configuration archive and Configuration Rollback Confirmed Change (the IOS device-side safety
//! net, Cisco "Configuration Rollback Confirmed Change", IOS XE 17 System Management guide):
//!
//! ```text
//!   archive / path PATH                      needed first (fault key `archive-path`, per device)
//!   configure terminal revert timer MINUTES  archive the running configuration, enter config mode,
//!                                            start the device's own timer (1-120 minutes)
//!   configure confirm                        keep the change, stop the timer
//!   configure revert now                     put the archived configuration back at once
//!   (timer expires)                          the device puts it back by itself, session or not
//!   show archive                             ` Archive feature not enabled` without a path
//!   show archive config rollback timer       `%No Rollback Confirmed Change pending` when idle
//! ```
//!
//! The timer belongs to the device, not to the SSH session that armed it: a gateway that dies after
//! arming it leaves the device to revert by itself. A simulated minute lasts `revert-minute-ms`
//! (default 60 000) so tests need not wait real minutes. What the archive holds is the running
//! configuration (hostname, VLANs, interfaces); LLDP neighbours are the topology's and are kept.
//!
//! Answers (sources in docs/fixture-sources.md, "IOS Configuration Rollback Confirmed Change"):
//! ` Archive feature not enabled`, `%No Rollback Confirmed Change pending`, `show archive`'s listing,
//! the `Rollback Confirmed Change: Backing up current running config to ...` line and the timer's
//! `Timer type:` / `Timer value: N min` / `User:` fields follow published IOS output and the strings
//! napalm's IOS driver matches; the field order of the timer and `Time remaining:` are ours, the
//! refusal without an archive (`%Turn config archive on before using Rollback Confirmed Change`) is
//! quoted from third-party code, and the refusal of a second pending change is ours (no sample
//! found).

use super::Device;
use super::state::DeviceState;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What `configure terminal revert timer` is refused with when no archive path is configured.
pub const NO_ARCHIVE: &str = "%Turn config archive on before using Rollback Confirmed Change";
/// `configure confirm`, `configure revert now` and `show archive config rollback timer` when no
/// change waits for its confirmation.
pub const NOT_PENDING: &str = "%No Rollback Confirmed Change pending";

/// The device's archive and its one pending confirmed change.
#[derive(Debug)]
pub struct Archive {
    path: Option<String>,
    minute: Duration,
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Archives written so far (file names end in `-N`).
    saved: Vec<String>,
    pending: Option<Pending>,
    /// Bumped at every arm, confirm and revert: a timer task acts only on its own arming.
    generation: u64,
}

#[derive(Debug)]
struct Pending {
    archived: DeviceState,
    minutes: u32,
    deadline: Instant,
    user: String,
}

fn lock(m: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Put the archived configuration back (neighbours are not configuration).
fn restore(dev: &Device, archived: DeviceState) {
    let mut st = dev.state();
    let neighbors = std::mem::take(&mut st.neighbors);
    *st = archived;
    st.neighbors = neighbors;
}

impl Archive {
    pub fn new(path: Option<String>, minute: Option<Duration>) -> Archive {
        Archive {
            path,
            minute: minute.unwrap_or(Duration::from_secs(60)),
            inner: Arc::default(),
        }
    }

    pub fn configured(&self) -> bool {
        self.path.is_some()
    }

    /// Whether a confirmed change waits for `configure confirm` (tests read it).
    pub fn pending(&self) -> bool {
        lock(&self.inner).pending.is_some()
    }

    /// How many archives the device wrote (one per arming; tests read it).
    pub fn archives(&self) -> usize {
        lock(&self.inner).saved.len()
    }

    /// `configure terminal revert timer MINUTES`: `Ok(text)` enters configuration mode.
    pub fn arm(&self, dev: &Arc<Device>, minutes: &str) -> Result<String, String> {
        let Some(path) = &self.path else {
            return Err(format!("{NO_ARCHIVE}\n"));
        };
        let minutes: u32 = match minutes.parse() {
            Ok(m) if (1..=120).contains(&m) => m,
            _ => return Err("% Invalid input detected at '^' marker.\n".into()),
        };
        let mut g = lock(&self.inner);
        if g.pending.is_some() {
            return Err("%Rollback Confirmed Change already pending: configure confirm or configure revert now first\n".into());
        }
        let file = format!("{path}-{}-{}", stamp(super::now()), g.saved.len());
        g.saved.push(file.clone());
        g.generation += 1;
        let generation = g.generation;
        let wait = self.minute * minutes;
        g.pending = Some(Pending {
            archived: dev.state().clone(),
            minutes,
            deadline: Instant::now() + wait,
            user: dev.username.clone(),
        });
        drop(g);
        let inner = self.inner.clone();
        let dev = dev.clone();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let mut g = lock(&inner);
            if g.generation != generation {
                return;
            }
            if let Some(p) = g.pending.take() {
                g.generation += 1;
                restore(&dev, p.archived);
                tracing::info!(device = %dev.name, "revert timer expired: the archived configuration is back");
            }
        });
        Ok(format!(
            "Rollback Confirmed Change: Backing up current running config to {file}\n\n\
             Enter configuration commands, one per line.  End with CNTL/Z.\n"
        ))
    }

    /// `configure confirm`.
    pub fn confirm(&self) -> String {
        let mut g = lock(&self.inner);
        if g.pending.take().is_none() {
            return format!("{NOT_PENDING}\n");
        }
        g.generation += 1;
        String::new()
    }

    /// `configure revert now`.
    pub fn revert_now(&self, dev: &Device) -> String {
        let mut g = lock(&self.inner);
        let Some(p) = g.pending.take() else {
            return format!("{NOT_PENDING}\n");
        };
        g.generation += 1;
        restore(dev, p.archived);
        String::new()
    }

    /// `show archive`.
    pub fn show(&self) -> String {
        let Some(path) = &self.path else {
            return " Archive feature not enabled\n".into();
        };
        let g = lock(&self.inner);
        let mut s = format!(
            "The maximum archive configurations allowed is 10.\n\
             There are currently {} archive configurations saved.\n\
             The next archive file will be named {path}-<timestamp>-{}\n Archive #  Name\n",
            g.saved.len(),
            g.saved.len()
        );
        let shown = g.saved.len().saturating_sub(10);
        for (i, f) in g.saved.iter().enumerate().skip(shown) {
            let recent = if i + 1 == g.saved.len() {
                " <- Most Recent"
            } else {
                ""
            };
            s.push_str(&format!("   {:<2}       {f}{recent}\n", i - shown + 1));
        }
        s
    }

    /// `show archive config rollback timer`.
    pub fn show_timer(&self) -> String {
        let g = lock(&self.inner);
        let Some(p) = &g.pending else {
            return format!("{NOT_PENDING}\n");
        };
        let left = p.deadline.saturating_duration_since(Instant::now());
        // Remaining time in device minutes and seconds (a simulated minute may be shorter).
        let secs = (left.as_secs_f64() * 60.0 / self.minute.as_secs_f64().max(0.001)) as u64;
        format!(
            "Timer type: Confirmed Change\nTimer value: {} min\nTime remaining: {:02}:{:02}:{:02}\nUser: {}\n",
            p.minutes,
            secs / 3600,
            (secs / 60) % 60,
            secs % 60,
            p.user
        )
    }

    /// The running configuration's `archive` block.
    pub fn running_config(&self) -> String {
        match &self.path {
            Some(p) => format!("archive\n path {p}\n!\n"),
            None => String::new(),
        }
    }
}

/// `Jun--6-10-38-00.741`, as IOS names archive files (month, day padded with '-', time).
fn stamp(unix: f64) -> String {
    let t = super::utc(unix);
    let ms = ((unix * 1000.0).round() as i64).rem_euclid(1000);
    format!(
        "{}-{:->2}-{:02}-{:02}-{:02}.{ms:03}",
        super::abbrev(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_file_names_follow_ios() {
        // 2020-06-06 10:38:00.741 UTC
        assert_eq!(stamp(1_591_439_880.741), "Jun--6-10-38-00.741");
        assert_eq!(stamp(1_581_335_729.957), "Feb-10-11-55-29.957");
    }
}
