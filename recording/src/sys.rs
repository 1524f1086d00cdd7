//! The operating-system calls that std does not offer, and the only `unsafe` code of the crate.
//! Each function is safe to call; each has a portable fallback where the platform lacks the call.
#![allow(unsafe_code)]

use std::process::Child;

/// Runs `hook` when the process exits normally (after `main` returns, or `exit` is called): the
/// end of a libtest binary, whose `main` is not ours. `hook` must not panic across the boundary;
/// the caller catches its panics.
pub fn at_exit(hook: extern "C" fn()) {
    #[cfg(unix)]
    // SAFETY: registers a plain function pointer; `atexit` reads nothing else.
    unsafe {
        libc::atexit(hook);
    }
    #[cfg(not(unix))]
    let _ = hook;
}

/// Whether the child has exited, without reaping it (unix), so its process group id stays ours
/// until [`kill_group`] has run.
pub fn exited(child: &mut Child) -> bool {
    #[cfg(unix)]
    {
        // SAFETY: `waitid` writes only into the zeroed `siginfo_t` we own; WNOWAIT leaves the
        // child waitable, so `Child::wait` still reaps it afterwards.
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                child.id() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            if rc != 0 {
                // ECHILD and the like: nothing left to wait for.
                return true;
            }
            info.si_pid() != 0
        }
    }
    #[cfg(not(unix))]
    {
        !matches!(child.try_wait(), Ok(None))
    }
}

/// Kills the child's whole process group (unix; the child was spawned with `process_group(0)`),
/// so grandchildren that hold its pipes die too; elsewhere, the child.
pub fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    // SAFETY: plain syscall; the child leads its own group and is not yet reaped, so the id is
    // still ours.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    {
        let _ = child.kill();
    }
}

/// Sets `TCP_NODELAY` on a listening socket, which the connections it accepts inherit (Linux,
/// the BSDs, macOS): a small answer is sent at once instead of waiting for the peer's delayed
/// acknowledgement (40 ms on Linux) behind the segment before it. `false` where it could not be
/// set; the server then works as before, only slower on answers written in several pieces.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub fn no_delay(listener: &std::net::TcpListener) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let on: libc::c_int = 1;
        // SAFETY: the descriptor is the listener's, open for the call; the option value is a
        // c_int that lives across it, and its size is passed with it.
        let status = unsafe {
            libc::setsockopt(
                listener.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&on as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        status == 0
    }
    #[cfg(not(unix))]
    {
        let _ = listener;
        false
    }
}

/// A folder held open, whose files are `stat`ed by name: `fstatat` walks one path component a
/// file where `stat` of the whole path walks every one (discovery stamps every fixture of a suite
/// before its first test, most of them in a few folders). Linux and Android, whose `stat` has
/// the nanosecond fields read here; elsewhere discovery stats the whole path.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub struct Folder(std::fs::File);

/// What a `stat` says of a file: size, modification and change times (nanoseconds since the
/// epoch) and inode, as `std::fs::metadata` reads them.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    pub size: u64,
    pub mtime: i128,
    pub ctime: i128,
    pub inode: u64,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
impl Folder {
    pub fn open(dir: &std::path::Path) -> Option<Folder> {
        std::fs::File::open(dir).ok().map(Folder)
    }

    /// The stat of the file `name` in this folder, links followed (as `std::fs::metadata`);
    /// `None` when it has none, or a name no file can have here (a NUL, over 255 bytes).
    pub fn stat(&self, name: &std::ffi::OsStr) -> Option<FileStat> {
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let bytes = name.as_bytes();
        let mut path = [0u8; 256];
        if bytes.len() >= path.len() || bytes.contains(&0) {
            return None;
        }
        path[..bytes.len()].copy_from_slice(bytes);
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `path` is NUL-terminated and outlives the call; `stat` is the buffer
        // `fstatat` writes, read only after it succeeded.
        let stat = unsafe {
            if libc::fstatat(
                self.0.as_raw_fd(),
                path.as_ptr().cast(),
                stat.as_mut_ptr(),
                0,
            ) != 0
            {
                return None;
            }
            stat.assume_init()
        };
        let nanos = |secs: i64, nsec: i64| secs as i128 * 1_000_000_000 + nsec as i128;
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        Some(FileStat {
            size: stat.st_size as u64,
            mtime: nanos(stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            ctime: nanos(stat.st_ctime as i64, stat.st_ctime_nsec as i64),
            inode: stat.st_ino as u64,
        })
    }
}

/// How many columns wide the terminal on standard error is, where it says.
pub fn stderr_columns() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut size = libc::winsize {
            ws_row: 0,
            ws_col: 0,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; descriptor 2 is only
        // asked, not changed.
        let ok = unsafe { libc::ioctl(2, libc::TIOCGWINSZ, &mut size) } == 0;
        (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
    }
    #[cfg(not(unix))]
    None
}

/// This process's standard output turned into a pipe: the returned reader gets what is written
/// to it (by std, libtest, any code), and [`StdoutPipe::restore`] puts the former output back,
/// which ends the reader's stream. `None` where the platform or the moment does not allow it.
pub struct StdoutPipe {
    #[cfg(unix)]
    saved: std::os::fd::OwnedFd,
}

impl StdoutPipe {
    /// Redirects standard output into a new pipe: the pipe's reading end, and what restores.
    pub fn start() -> Option<(std::fs::File, std::fs::File, StdoutPipe)> {
        #[cfg(unix)]
        {
            use std::io::Write;
            use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
            let _ = std::io::stdout().flush();
            let mut ends = [0 as libc::c_int; 2];
            // SAFETY: `pipe` writes two new descriptors into the array we own; `dup` and `dup2`
            // only duplicate descriptors; each new descriptor is owned by exactly one OwnedFd
            // (closed once), and descriptor 1 is replaced atomically by `dup2`.
            unsafe {
                if libc::pipe(ends.as_mut_ptr()) != 0 {
                    return None;
                }
                let (read, write) = (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1]));
                let saved = libc::dup(1);
                if saved < 0 {
                    return None;
                }
                let saved = OwnedFd::from_raw_fd(saved);
                let terminal = libc::dup(saved.as_raw_fd());
                if terminal < 0 {
                    return None;
                }
                let terminal = OwnedFd::from_raw_fd(terminal);
                if libc::dup2(write.as_raw_fd(), 1) < 0 {
                    return None;
                }
                Some((
                    std::fs::File::from(read),
                    std::fs::File::from(terminal),
                    StdoutPipe { saved },
                ))
            }
        }
        #[cfg(not(unix))]
        None
    }

    /// Puts the former standard output back (what was written before is flushed into the pipe
    /// first); the pipe's reader then reads to its end once no child process holds it.
    pub fn restore(self) {
        #[cfg(unix)]
        {
            use std::io::Write;
            use std::os::fd::AsRawFd;
            let _ = std::io::stdout().flush();
            // SAFETY: duplicates a descriptor we own onto descriptor 1, closing the pipe's
            // writing end there.
            unsafe {
                libc::dup2(self.saved.as_raw_fd(), 1);
            }
        }
    }
}

/// Runs `f` (a live model call, or building the model) where a blocking client may run: on a
/// thread of its own when the caller is inside a tokio runtime, since a blocking client built on
/// tokio (`reqwest::blocking`) panics there; on the caller's thread otherwise. A panic in `f`
/// reaches the caller as if `f` had run there.
pub fn outside_async<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    #[cfg(feature = "tokio")]
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|scope| match scope.spawn(f).join() {
                Ok(value) => value,
                Err(payload) => std::panic::resume_unwind(payload),
            });
        }
    }
    f()
}

#[cfg(test)]
mod tests {
    /// The connections a listener accepts inherit its `TCP_NODELAY`, which is what the plain
    /// tiny_http servers of the proxy bench and tests rely on (tiny_http never sees the option).
    #[test]
    #[cfg(unix)]
    fn accepted_connections_inherit_no_delay() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        assert!(super::no_delay(&listener));
        for (listener, expected) in [(&listener, true), (&plain, false)] {
            let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (accepted, _) = listener.accept().unwrap();
            assert_eq!(accepted.nodelay().unwrap(), expected);
        }
    }

    /// A file stat'ed in its open folder reads as `std::fs::metadata` reads it; a missing file,
    /// a folder and a link are told as `metadata` tells them.
    #[test]
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn a_file_stated_in_its_folder_reads_as_metadata_reads_it() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a.json"), dir.path().join("link.json"))
            .unwrap();
        let folder = super::Folder::open(dir.path()).unwrap();
        for name in ["a.json", "sub", "link.json"] {
            let meta = std::fs::metadata(dir.path().join(name)).unwrap();
            let nanos = |secs: i64, nsec: i64| secs as i128 * 1_000_000_000 + nsec as i128;
            let want = super::FileStat {
                size: meta.size(),
                mtime: nanos(meta.mtime(), meta.mtime_nsec()),
                ctime: nanos(meta.ctime(), meta.ctime_nsec()),
                inode: meta.ino(),
            };
            assert_eq!(folder.stat(name.as_ref()), Some(want), "{name}");
        }
        assert_eq!(folder.stat("missing.json".as_ref()), None);
        assert_eq!(folder.stat("a\0b".as_ref()), None);
        assert_eq!(folder.stat("x".repeat(300).as_ref()), None);
    }
}
