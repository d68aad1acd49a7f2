//! Scratch folders of the integration tests: one per test under the system's temporary folder,
//! named by the test binary's process and the test, emptied when made and removed when the
//! test ends (passed or failed), so that running the tests leaves nothing behind.

use std::path::{Path, PathBuf};

/// A scratch folder, removed with everything in it when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// The empty folder `nkrank-PREFIX-PID-NAME` in the temporary folder.
    pub fn new(prefix: &str, name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("nkrank-{prefix}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}
