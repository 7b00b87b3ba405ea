//! Settings of the process allocator (mimalloc, the `#[global_allocator]` of `lake` and
//! `lake-bench`) for a replica that scans.
//!
//! mimalloc returns freed memory to the operating system in "purges": once a second
//! (`purge_delay`, 1,000 ms in mimalloc 3) every free range of an arena is purged, by
//! default by decommitting it (`purge_decommits` = 1: `madvise(MADV_DONTNEED)` on Linux).
//! The next allocation there faults the pages in again, and the kernel zeroes each one. A
//! scan reads pages into buffers that live for one batch, so a replica running TPC-H paid
//! for this on every query: in a profile of q19 at SF 1, 8 % of the CPU was the kernel
//! zeroing pages (`clear_page_erms` under the page faults of `pread` writing into freshly
//! decommitted buffers).
//!
//! With `purge_decommits` = 0, a purge resets the range instead (`madvise(MADV_FREE)`):
//! the kernel takes the pages back only when it needs memory, and until then a buffer
//! allocated there is written without a fault. The memory stays available to the
//! machine, but is counted in the replica's resident set until the kernel reclaims it.
//! Measured in bench/README.md ("Round 20").

use libmimalloc_sys::{mi_option_set, mi_option_t};

/// mimalloc's `mi_option_purge_decommits`: its index in `mi_option_e` (mimalloc 2 and 3,
/// `include/mimalloc.h`), which `libmimalloc-sys` 0.1.49 does not name.
const MI_OPTION_PURGE_DECOMMITS: mi_option_t = 5;

/// The environment variable by which mimalloc reads `purge_decommits` at start-up.
pub const PURGE_DECOMMITS_ENV: &str = "MIMALLOC_PURGE_DECOMMITS";

/// Makes mimalloc's purges reset freed memory (`MADV_FREE`) instead of decommitting it, so
/// that a replica reuses its scan buffers' pages without faulting them in again; unless
/// the environment sets [`PURGE_DECOMMITS_ENV`], which then wins as mimalloc already read
/// it. Takes effect for every later purge; call it at the start of `main`.
pub fn reset_on_purge() {
    if std::env::var_os(PURGE_DECOMMITS_ENV).is_none() {
        // SAFETY: mimalloc's options are atomics that may be set from any thread.
        unsafe { mi_option_set(MI_OPTION_PURGE_DECOMMITS, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::{CStr, c_char, c_long, c_void};

    unsafe extern "C" {
        /// mimalloc's listing of its version and every option by name and value
        /// (`mi_options_print_out` in `include/mimalloc.h`; not bound by
        /// `libmimalloc-sys`).
        fn mi_options_print_out(out: libmimalloc_sys::mi_output_fun, arg: *mut c_void);
    }

    /// Appends each message mimalloc prints to the `String` behind `arg`.
    unsafe extern "C" fn collect(message: *const c_char, arg: *mut c_void) {
        // SAFETY: `arg` is the `String` passed to `mi_options_print_out` below, and mimalloc
        // passes a NUL-terminated message.
        let (out, message) = unsafe { (&mut *arg.cast::<String>(), CStr::from_ptr(message)) };
        out.push_str(&message.to_string_lossy());
    }

    /// The value mimalloc lists for the option named `name`.
    fn listed(name: &str) -> Option<c_long> {
        let mut out = String::new();
        // SAFETY: `collect` only appends to `out`, which outlives the call.
        unsafe { mi_options_print_out(Some(collect), (&raw mut out).cast()) };
        let prefix = format!("option '{name}': ");
        out.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|value| value.split_whitespace().next()?.parse().ok())
    }

    #[test]
    fn the_option_set_is_mimallocs_purge_decommits() {
        let before = listed("purge_decommits").expect("mimalloc lists purge_decommits");
        let delay = listed("purge_delay");
        for value in [1, 0] {
            // SAFETY: as in `reset_on_purge`.
            unsafe { mi_option_set(MI_OPTION_PURGE_DECOMMITS, value) };
            assert_eq!(listed("purge_decommits"), Some(value));
        }
        // Nothing else moved: the purge delay is mimalloc's.
        assert_eq!(listed("purge_delay"), delay);
        // SAFETY: as above.
        unsafe { mi_option_set(MI_OPTION_PURGE_DECOMMITS, before) };
    }
}
